#!/usr/bin/env bash
# Builds the engine and C API tests with ThreadSanitizer into build-tsan/
# (or $STRIDER_BUILD_DIR) and runs the tests that share sessions, models,
# arena pools and the kernel thread pool between threads. Any report of a
# data race fails the script. Extra arguments go to CMake.
#
#   scripts/tsan.sh            # ~10-20 min on 2 cores the first time
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${STRIDER_BUILD_DIR:-$ROOT/build-tsan}"
JOBS="${STRIDER_JOBS:-2}"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSTRIDER_SANITIZE_THREAD=ON -DSTRIDER_ENABLE_CUDA=OFF \
  -DSTRIDER_BUILD_BENCHMARKS=OFF \
  -DPython3_EXECUTABLE="$ROOT/.venv/bin/python" "$@" >/dev/null
ninja -C "$BUILD" -j "$JOBS" StriderUnitTests StriderCAPITests
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
"$BUILD/bin/StriderUnitTests" \
  --gtest_filter='Session.*:ArenaPool.*:Artifact*.*:Model*.*'
"$BUILD/bin/StriderCAPITests"
echo "tsan: ok"
