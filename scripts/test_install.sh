#!/usr/bin/env bash
# Install a build of Strider into a fresh prefix and build the embedding
# examples (examples/embed-c, examples/embed-cpp) against the installed
# package, as an outside project would; then run them on the sample model,
# both as ONNX and compiled by the installed strider-compile, and check the
# C example's top class against ONNX Runtime's.
#
#   scripts/test_install.sh BUILD_DIR [WORK_DIR]
#
# STRIDER_EXAMPLE_FLAGS: extra compiler and linker flags for the examples
# (the sanitizer build passes its -fsanitize flags).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "$1" && pwd)"
WORK="${2:-$BUILD/install-test}"
PY="$ROOT/.venv/bin/python"
FLAGS="${STRIDER_EXAMPLE_FLAGS:-}"

rm -rf "$WORK"
mkdir -p "$WORK"
PREFIX="$WORK/prefix"
cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null

for ex in embed-c embed-cpp; do
  cmake -S "$ROOT/examples/$ex" -B "$WORK/$ex" -G Ninja \
    -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="$FLAGS" -DCMAKE_CXX_FLAGS="$FLAGS" \
    -DCMAKE_EXE_LINKER_FLAGS="$FLAGS" >/dev/null
  cmake --build "$WORK/$ex" -j 2 >/dev/null
done
# Nothing of the build tree may leak into the installed package.
if grep -rq "$BUILD" "$PREFIX/lib/cmake/Strider"; then
  echo "test_install: the installed CMake package refers to the build tree" >&2
  exit 1
fi

MODEL="$ROOT/examples/resnet_block.onnx"
"$PREFIX/bin/strider-compile" "$MODEL" -o "$WORK/compiled" >/dev/null
# A 32 x 32 PPM and ONNX Runtime's top class for it (pixels / 255, NCHW).
"$PY" - "$MODEL" "$WORK/image.ppm" > "$WORK/expected.txt" <<'PYEOF'
import sys
import numpy as np
import onnxruntime as ort
rng = np.random.default_rng(7)
pixels = rng.integers(0, 256, size=(32, 32, 3), dtype=np.uint8)
with open(sys.argv[2], "wb") as f:
    f.write(b"P6\n32 32\n255\n" + pixels.tobytes())
x = (pixels.astype(np.float32) / 255.0).transpose(2, 0, 1)[None]
sess = ort.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
print(int(np.argmax(sess.run(None, {"image": x})[0])))
PYEOF
want="class $(cat "$WORK/expected.txt"):"
for m in "$MODEL" "$WORK/compiled"; do
  out="$("$WORK/embed-c/classify" "$m" "$WORK/image.ppm" 3)"
  echo "$out"
  top="$(echo "$out" | grep '^class ' | head -1)"
  if [[ "$top" != "$want"* ]]; then
    echo "test_install: $m: top class '$top', ONNX Runtime says '$want'" >&2
    exit 1
  fi
  "$WORK/embed-cpp/describe" "$m" 3
done
# Bad input is refused with a message, not a crash.
if "$WORK/embed-c/classify" "$WORK/image.ppm" "$WORK/image.ppm" 2> "$WORK/err.txt"; then
  echo "test_install: a PPM loaded as a model" >&2
  exit 1
fi
grep -q "classify: .*image.ppm" "$WORK/err.txt"
echo "test_install: ok"
