#!/usr/bin/env bash
# Test the Python package (python/) against a CMake build of Strider:
# install it with pip into BUILD/python-site (the venv is not touched; the
# backend takes libstrider and strider-compile from BUILD, rebuilding only
# if they are out of date), then run its pytest suite from there.
# Usage: scripts/test_python.sh [BUILD_DIR]   (default $STRIDER_BUILD_DIR or build/)
# $STRIDER_PYTHON names the interpreter (default the project venv's).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:-${STRIDER_BUILD_DIR:-$ROOT/build}}" && pwd)"
PY="${STRIDER_PYTHON:-$ROOT/.venv/bin/python}"
SITE="$BUILD/python-site"

if ! "$PY" -c "import numpy, onnx, onnxruntime, pytest" 2>/dev/null; then
  echo "test_python: $PY lacks numpy, onnx, onnxruntime or pytest: run scripts/setup.sh" >&2
  exit 1
fi
rm -rf "$SITE"
STRIDER_BUILD_DIR="$BUILD" "$PY" -m pip install --quiet --disable-pip-version-check \
  --no-build-isolation --no-deps --no-index --target "$SITE" "$ROOT/python"
# A sanitizer build's library needs its ASan runtime loaded first; the
# interpreter keeps allocations until exit, so leaks are not checked.
ASAN_RUNTIME="$(ldd "$SITE/strider/_native/libstrider.so" | awk '/libasan/ {print $3}' || true)"
if [ -n "$ASAN_RUNTIME" ]; then
  export LD_PRELOAD="$ASAN_RUNTIME"
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
# -P: the current directory does not go on sys.path, so the tests import
# the installed package, never the source tree.
cd "$BUILD"
PYTHONPATH="$SITE" "$PY" -P -m pytest -p no:cacheprovider -q "$ROOT/python/tests"
