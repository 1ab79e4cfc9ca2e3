#!/usr/bin/env bash
# Configure and build Strider into build/ (or $STRIDER_BUILD_DIR) with Ninja.
# Extra arguments go to CMake (e.g. -DSTRIDER_SANITIZE=ON).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${STRIDER_BUILD_DIR:-$ROOT/build}"
JOBS="${STRIDER_JOBS:-2}"
cmake -S "$ROOT" -B "$BUILD" -G Ninja \
  -DPython3_EXECUTABLE="$ROOT/.venv/bin/python" "$@" >/dev/null
ninja -C "$BUILD" -j "$JOBS"
