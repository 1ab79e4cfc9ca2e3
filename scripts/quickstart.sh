#!/usr/bin/env bash
# Quick start: install what is missing, build, and run Strider on the bundled
# sample model: import ONNX -> optimize (the passes that exist) -> export
# ONNX, then check the exported model against ONNX Runtime on the original.
# Usage: scripts/quickstart.sh [MODEL.onnx]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"

MODEL="${1:-$ROOT/examples/resnet_block.onnx}"
BIN="${STRIDER_BUILD_DIR:-$ROOT/build}/bin"
OUT="${STRIDER_BUILD_DIR:-$ROOT/build}/quickstart"
mkdir -p "$OUT"

echo "== import $MODEL"
"$BIN/strider-translate" --import-onnx "$MODEL" -o "$OUT/model.lir"
echo "== optimize: infer-shapes, dce"
"$BIN/strider-opt" "$OUT/model.lir" --pass-pipeline=infer-shapes,dce -o "$OUT/model.opt.lir"
echo "== export $OUT/model.onnx"
"$BIN/strider-translate" --export-onnx "$OUT/model.opt.lir" -o "$OUT/model.onnx"
echo "== summary"
echo "textual IR: $OUT/model.opt.lir ($(grep -c ' = ' "$OUT/model.opt.lir") nodes)"
"$ROOT/.venv/bin/python" "$ROOT/scripts/compare_ort.py" "$MODEL" "$OUT/model.onnx"
