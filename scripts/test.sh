#!/usr/bin/env bash
# Install what is missing, build, and run the whole test suite (lit, unit
# tests, ONNX conformance) through ctest.
# STRIDER_SANITIZE=1 builds into build-asan/ with ASan+UBSan instead.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
if [ "${STRIDER_SANITIZE:-0}" = 1 ]; then
  export STRIDER_BUILD_DIR="${STRIDER_BUILD_DIR:-$ROOT/build-asan}"
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  "$ROOT/scripts/build.sh" -DSTRIDER_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
else
  "$ROOT/scripts/build.sh"
fi
BUILD="${STRIDER_BUILD_DIR:-$ROOT/build}"
ctest --test-dir "$BUILD" --output-on-failure -j 2
