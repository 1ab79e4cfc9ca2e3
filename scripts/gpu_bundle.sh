#!/usr/bin/env bash
# Build here, then gather what scripts/gpu_check.sh runs on a GPU machine
# that has a CUDA driver, PyTorch (cuDNN, cuBLAS) and Python but no Debian
# -dev packages and no network: stripped binaries, the shared libraries
# they need that are not glibc's own, ONNX's node tests and a subset of
# the third-party models (scripts/real_models.py's cache), packed as
# gpu-bundle.tar.gz (ignored by git), which is what the device tool's
# `carry` takes:
#
#   scripts/gpu_bundle.sh            # then: carry ["gpu-bundle.tar.gz"],
#                                    # command "scripts/gpu_check.sh"
#
# The archive must stay under the device tool's 64 MiB (with the working
# tree); the script fails if it does not.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${STRIDER_BUILD_DIR:-$ROOT/build}"
OUT="$BUILD/gpu-bundle"
ARCHIVE="$ROOT/gpu-bundle.tar.gz"
LIMIT_MB="${STRIDER_BUNDLE_LIMIT_MB:-56}"

"$ROOT/scripts/setup.sh" >/dev/null
"$ROOT/scripts/build.sh" >/dev/null

rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/testdata"
BINARIES=(
  "$BUILD/bin/strider-run"
  "$BUILD/bin/strider-compile"
  "$BUILD/bin/strider-numeric-conformance"
  "$BUILD/bin/StriderCudaTests"
)
for B in "${BINARIES[@]}"; do
  [ -x "$B" ] || { echo "gpu_bundle: missing $B (is nvcc installed?)" >&2; exit 1; }
  cp "$B" "$OUT/bin/"
  strip --strip-unneeded "$OUT/bin/$(basename "$B")"
done

# Shared libraries the binaries load, but not glibc's (the device has its
# own, and mixing loaders breaks) and not the CUDA driver. cuDNN and
# cuBLASLt are opened at run time from the device's PyTorch.
for B in "$OUT"/bin/*; do
  ldd "$B" | awk '/=> \//{print $3}'
done | sort -u | while read -r L; do
  case "$(basename "$L")" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libcuda.so*) ;;
    *) cp -L "$L" "$OUT/lib/" ;;
  esac
done
strip --strip-unneeded "$OUT"/lib/*.so* 2>/dev/null || true

# ONNX's node tests (the conformance run through --backend=cuda).
DATA=/usr/share/libonnx-testdata/data
for Sub in node simple pytorch-operator; do
  [ -d "$DATA/$Sub" ] && cp -r "$DATA/$Sub" "$OUT/testdata/"
done

# Third-party models (part 6: fp32 and fp16 against ONNX Runtime on models
# other people exported, where half precision engages), in
# real_models.py's cache layout: a subset, for the 64 MiB.
GPU_MODELS=(ppocr-v4-det ppocr-v2-cls ppocr-v5-cls nudenet-yolov8n
            silero-vad-v6 asr-nemo80-features asr-kaldi-features
            asr-whisper80-features piper-tashkeel)
CACHE="${STRIDER_MODEL_CACHE:-$HOME/.cache/strider/models}"
mkdir -p "$OUT/models"
"$ROOT/.venv/bin/python" "$ROOT/scripts/real_models.py" --suite thirdparty \
    --only "${GPU_MODELS[@]}" --cache "$CACHE" --list-files > "$OUT/models/FILES"
while read -r F; do
  mkdir -p "$OUT/models/$(dirname "$F")"
  cp "$CACHE/$F" "$OUT/models/$F"
done < "$OUT/models/FILES"
printf '%s\n' "${GPU_MODELS[@]}" > "$OUT/models/SELECTED"

tar -C "$OUT" -czf "$ARCHIVE.tmp" .
mv "$ARCHIVE.tmp" "$ARCHIVE"
SIZE_MB=$(( $(stat -c %s "$ARCHIVE") / 1048576 ))
echo "gpu_bundle: $ARCHIVE: ${SIZE_MB} MiB (limit ${LIMIT_MB}; unpacked $(du -sm "$OUT" | cut -f1) MiB)"
if [ "$SIZE_MB" -gt "$LIMIT_MB" ]; then
  echo "gpu_bundle: too large for the device tool; drop testdata/ or raise STRIDER_BUNDLE_LIMIT_MB" >&2
  exit 1
fi
