#!/usr/bin/env bash
# Quick start: install what is missing, build, and run Strider on the bundled
# sample model: strider-compile (import, canonicalize, layout assignment,
# export), then check the compiled model against ONNX Runtime on the
# original and show the head of the layout report.
# Usage: scripts/quickstart.sh [MODEL.onnx]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"

MODEL="${1:-$ROOT/examples/resnet_block.onnx}"
BIN="${STRIDER_BUILD_DIR:-$ROOT/build}/bin"
OUT="${STRIDER_BUILD_DIR:-$ROOT/build}/quickstart"
mkdir -p "$OUT"

echo "== strider-compile $MODEL"
"$BIN/strider-compile" "$MODEL" -o "$OUT/compiled"
echo "== ONNX Runtime: original vs $OUT/compiled/model.onnx"
"$ROOT/.venv/bin/python" "$ROOT/scripts/compare_ort.py" "$MODEL" "$OUT/compiled/model.onnx"
echo "== report ($OUT/compiled/report.txt)"
head -n 4 "$OUT/compiled/report.txt"
