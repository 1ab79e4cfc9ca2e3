#!/usr/bin/env bash
# Everything the CUDA backend needs checked on a GPU, in one command, on a
# machine with an NVIDIA GPU, its driver and a Python with PyTorch (cuDNN
# and cuBLAS inside), onnx, numpy and onnxruntime. Runs the bundle that
# scripts/gpu_bundle.sh built on the development machine
# (gpu-bundle.tar.gz, carried by the device tool), never builds:
#
#   1. the GPU unit tests (kernels and library runners against host loops,
#      whole programs against the reference interpreter, relayout
#      bandwidth against device-to-device copies)
#   2. ONNX's node tests through --backend=cuda, beside the CPU backend's
#   3. the model set (small variant, generated here by make_model_set.py)
#      through --backend=cuda against ONNX Runtime: fp32 within 1e-4,
#      fp16 within the documented tolerance
#   4. the benchmark against PyTorch on the same GPU (scripts/gpu_bench.py)
#   5. the layout decision measured: ResNet-50, MobileNetV2 and the UNet
#      (make_model_set.py full, batch 1) tuned on this GPU (strider-compile
#      --tune, fp16), then run with the chosen layouts, all-NCHW and
#      all-NHWC (the table's cuDNN algorithms in each)
#
# Prints a summary line per part; exits non-zero if any part failed.
# STRIDER_GPU_CHECK_PARTS="1 2 3 4 5" picks parts.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ARCHIVE="${STRIDER_GPU_BUNDLE:-$ROOT/gpu-bundle.tar.gz}"
PARTS="${STRIDER_GPU_CHECK_PARTS:-1 2 3 4 5}"
PY="${PYTHON:-python3}"
WORK="${TMPDIR:-/tmp}/strider-gpu-check"
BUNDLE="$WORK/bundle"
mkdir -p "$WORK"

if [ ! -f "$ARCHIVE" ]; then
  echo "gpu_check: no $ARCHIVE (run scripts/gpu_bundle.sh on the build machine and carry gpu-bundle.tar.gz)" >&2
  exit 2
fi
rm -rf "$BUNDLE" && mkdir -p "$BUNDLE" && tar -C "$BUNDLE" -xzf "$ARCHIVE" || exit 2
nvidia-smi -L || { echo "gpu_check: no GPU (nvidia-smi -L failed)" >&2; exit 2; }

# cuDNN and cuBLASLt from PyTorch's environment (its nvidia-* wheels or
# its own lib directory), the bundle's libraries first.
TORCH_LIBS=$("$PY" - <<'EOF' 2>/dev/null
import glob, os
dirs = []
try:
    import torch
    dirs.append(os.path.join(os.path.dirname(torch.__file__), "lib"))
except Exception:
    pass
try:
    import nvidia
    for p in nvidia.__path__:
        dirs += sorted(glob.glob(os.path.join(p, "*", "lib")))
except Exception:
    pass
print(":".join(d for d in dirs if os.path.isdir(d)))
EOF
)
export LD_LIBRARY_PATH="$BUNDLE/lib${TORCH_LIBS:+:$TORCH_LIBS}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
BIN="$BUNDLE/bin"
"$BIN/strider-run" --version >/dev/null 2>&1 || {
  echo "gpu_check: the bundle's binaries do not start here (glibc $(ldd --version | head -1)):" >&2
  "$BIN/strider-run" --version
  exit 2
}

STATUS=0
SUMMARY=()
note() { SUMMARY+=("$1"); echo "== $1"; }

if [[ " $PARTS " == *" 1 "* ]]; then
  echo "== 1. GPU unit tests"
  if "$BIN/StriderCudaTests" --gtest_brief=1 2>&1 | tee "$WORK/unittests.log"; then
    note "unit tests: $(grep -E '^\[  PASSED  \]' "$WORK/unittests.log" | tail -1)"
    if grep -qE '^\[  SKIPPED \]' "$WORK/unittests.log"; then
      STATUS=1
      note "unit tests: some skipped on a GPU machine (CUDA sees no device?)"
    fi
  else
    STATUS=1
    note "unit tests: FAILED ($(grep -cE '^\[  FAILED  \]' "$WORK/unittests.log") lines of failures)"
  fi
  grep -h "relayout-bandwidth:" "$WORK/unittests.log" | sed 's/^/   /' || true
fi

if [[ " $PARTS " == *" 2 "* ]]; then
  echo "== 2. ONNX node tests: cuda and cpu backends"
  ROOTS=()
  for Sub in node simple pytorch-operator; do
    [ -d "$BUNDLE/testdata/$Sub" ] && ROOTS+=("$BUNDLE/testdata/$Sub")
  done
  if [ ${#ROOTS[@]} -eq 0 ]; then
    note "conformance: no test data in the bundle"
  else
    for B in cuda cpu; do
      "$BIN/strider-numeric-conformance" --backend=$B "${ROOTS[@]}" > "$WORK/conformance-$B.log" 2>&1
      RC=$?
      grep -E "^FAIL" "$WORK/conformance-$B.log" | head -40
      note "conformance ($B): $(tail -1 "$WORK/conformance-$B.log")"
      [ "$B" = cuda ] && [ $RC -ne 0 ] && STATUS=1
    done
  fi
fi

if [[ " $PARTS " == *" 3 "* ]]; then
  echo "== 3. model set through --backend=cuda against ONNX Runtime"
  if "$PY" "$ROOT/scripts/make_model_set.py" --out "$WORK/models" --variant small > "$WORK/models.log" 2>&1; then
    FAILS=0; COUNT=0
    for M in "$WORK"/models/small/*.onnx; do
      NAME=$(basename "$M" .onnx); DATA="$WORK/models/small/$NAME.data"
      INPUTS=()
      for I in "$DATA"/input_*.npy; do INPUTS+=(--input "$(basename "$I" .npy)=$I"); done
      # fp32: cuDNN/cuBLASLt without TF32; fp16: AMP-style mixed precision.
      for P in "fp32 1e-4 1e-4" "fp16 5e-2 5e-2"; do
        set -- $P
        COUNT=$((COUNT + 1))
        if "$BIN/strider-run" "$M" --backend=cuda --precision=$1 "${INPUTS[@]}" \
             --compare "$DATA" --rtol $2 --atol $3 > "$WORK/$NAME.$1.log" 2>&1; then
          echo "   $NAME $1: $(grep -m1 'max abs error' "$WORK/$NAME.$1.log" | sed 's/.*max abs/max abs/')"
        else
          FAILS=$((FAILS + 1)); STATUS=1
          echo "   $NAME $1: FAILED"; sed 's/^/      /' "$WORK/$NAME.$1.log" | tail -5
        fi
      done
    done
    note "model set: $((COUNT - FAILS)) of $COUNT runs within tolerance (fp32 1e-4, fp16 5e-2)"
  else
    tail -5 "$WORK/models.log"
    note "model set: not generated (make_model_set.py needs onnx, numpy and onnxruntime)"
  fi
fi

if [[ " $PARTS " == *" 4 "* ]]; then
  echo "== 4. benchmark against PyTorch on this GPU"
  if "$PY" "$ROOT/scripts/gpu_bench.py" --strider-run "$BIN/strider-run" --work "$WORK/bench" 2>&1 | tee "$WORK/bench.log"; then
    note "benchmark: table above (also $WORK/bench/results.md)"
  else
    STATUS=1
    note "benchmark: FAILED"
  fi
fi

if [[ " $PARTS " == *" 5 "* ]]; then
  echo "== 5. layout choice measured: tuned auto vs all-NCHW vs all-NHWC (fp16, batch 1)"
  CAP=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)
  TARGET=cuda-sm90; [ "${CAP%%.*}" -lt 9 ] 2>/dev/null && TARGET=cuda-sm80
  L="$WORK/layouts"; mkdir -p "$L"
  TUNE="$L/$TARGET-fp16.tune"
  if "$PY" "$ROOT/scripts/make_model_set.py" --out "$WORK/models" --variant full \
       --only resnet50 mobilenetv2 unet > "$WORK/models-full.log" 2>&1; then
    FAILS=0
    printf '   %-12s %10s %10s %10s %9s %9s  %s\n' model auto_ms nchw_ms nhwc_ms nchw/auto nhwc/auto "channels-last (auto)"
    for NAME in resnet50 mobilenetv2 unet; do
      M="$WORK/models/full/$NAME.onnx"
      declare -A MS=()
      for MODE in auto nchw nhwc; do
        OUT="$L/$NAME.$MODE"; rm -rf "$OUT"
        TUNEFLAG=(); [ $MODE = auto ] && TUNEFLAG=(--tune)
        if ! "$BIN/strider-compile" "$M" -o "$OUT" --target=$TARGET --precision=fp16 \
               --layout=$MODE "${TUNEFLAG[@]}" --tuning-file="$TUNE" --svg=false \
               > "$L/$NAME.$MODE.compile.log" 2>&1; then
          FAILS=$((FAILS + 1)); MS[$MODE]=FAIL
          echo "   $NAME $MODE: compile FAILED"; tail -3 "$L/$NAME.$MODE.compile.log" | sed 's/^/      /'
          continue
        fi
        if "$BIN/strider-run" "$OUT" --backend=cuda --precision=fp16 --target=$TARGET \
             --tuning-file="$TUNE" --random-inputs --bench 100 --warmup 10 --json \
             > "$L/$NAME.$MODE.run.json" 2> "$L/$NAME.$MODE.run.log"; then
          MS[$MODE]=$("$PY" -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["median_ms"])' "$L/$NAME.$MODE.run.json")
        else
          FAILS=$((FAILS + 1)); MS[$MODE]=FAIL
          echo "   $NAME $MODE: run FAILED"; tail -3 "$L/$NAME.$MODE.run.log" | sed 's/^/      /'
        fi
      done
      RATIO() { "$PY" -c 'import sys
try: print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))
except ValueError: print("-")' "$1" "$2"; }
      CL=$(grep -m1 '^layouts:' "$L/$NAME.auto.compile.log" | sed 's/^layouts: //')
      printf '   %-12s %10s %10s %10s %9s %9s  %s\n' "$NAME" "${MS[auto]}" "${MS[nchw]}" "${MS[nhwc]}" \
        "$(RATIO "${MS[nchw]}" "${MS[auto]}")" "$(RATIO "${MS[nhwc]}" "${MS[auto]}")" "$CL"
      grep -h '^tuning:' "$L/$NAME.auto.compile.log" | sed 's/^/      /'
      unset MS
    done
    [ $FAILS -ne 0 ] && STATUS=1
    ENTRIES() { if [ -f "$TUNE" ]; then grep -c "^$1 " "$TUNE"; else echo 0; fi; }
    note "layout choice: $FAILS failures; table $TUNE ($(ENTRIES conv) convs, $(ENTRIES algo) algorithms)"
  else
    tail -5 "$WORK/models-full.log"
    note "layout choice: models not generated (make_model_set.py needs onnx, numpy and onnxruntime)"
  fi
fi

echo
echo "gpu_check summary ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)):"
for S in "${SUMMARY[@]}"; do echo "  $S"; done
exit $STATUS
