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
#      through --backend=cuda against ONNX Runtime at fp32 within 1e-4
#      (at fp16 the cost model keeps all of it in f32: part 6 checks fp16)
#   4. the benchmark against PyTorch on the same GPU (scripts/gpu_bench.py)
#   5. the layout decision measured: ResNet-50, MobileNetV2 and the UNet
#      (make_model_set.py full, batch 1) tuned on this GPU (strider-compile
#      --tune, fp16), then run with the chosen layouts, all-NCHW and
#      all-NHWC (the table's cuDNN algorithms in each)
#   6. third-party models (the bundle's subset of scripts/real_models.py's)
#      through --backend=cuda against ONNX Runtime: fp32 within rtol 1e-3,
#      atol 1e-4, fp16 within 5e-2 (where half precision engages, unlike
#      the small model set's)
#
# A smoke run of the example model comes first (the GPU and library copies
# it loaded, or why it failed). Prints a summary line per part; exits
# non-zero if any part failed.
#
# A lent GPU comes with minutes, not hours, so the run is budgeted:
#   STRIDER_GPU_CHECK_PARTS   the parts, run in the order given (default
#                             "1 4 3 6 2 5": what resolving needs first)
#   STRIDER_GPU_CHECK_BUDGET_S  seconds for all of them (default 540, under
#                             the device tool's 600 s per command); each
#                             part also has its own cap, and a part cut
#                             short says so in the summary
# When $OUT is set (the device tool), the summary and the parts' results
# are copied there as they finish: 8 files (the tool returns at most 8).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ARCHIVE="${STRIDER_GPU_BUNDLE:-$ROOT/gpu-bundle.tar.gz}"
PARTS="${STRIDER_GPU_CHECK_PARTS:-1 4 3 6 2 5}"
BUDGET="${STRIDER_GPU_CHECK_BUDGET_S:-540}"
PY="${PYTHON:-python3}"
WORK="${TMPDIR:-/tmp}/strider-gpu-check"
BUNDLE="$WORK/bundle"
START=$(date +%s)
mkdir -p "$WORK"

# The part's deadline: its cap from now, within the whole budget.
PART_END=0
begin_part() {
  local Now=$(date +%s)
  PART_END=$(( Now + $1 ))
  [ $PART_END -gt $(( START + BUDGET )) ] && PART_END=$(( START + BUDGET ))
}
# Runs a command until the part's deadline (exit 124 when cut short).
T() {
  local Left=$(( PART_END - $(date +%s) ))
  [ $Left -le 0 ] && return 124
  timeout -k 5 $Left "$@"
  local RC=$?
  [ $RC -eq 137 ] && RC=124
  return $RC
}
# Copies results back through the device tool's $OUT, if there is one.
keep() {
  [ -n "${OUT:-}" ] && [ -d "$OUT" ] || return 0
  for F in "$@"; do [ -f "$F" ] && cp "$F" "$OUT/" 2>/dev/null; done
  return 0
}

if [ ! -f "$ARCHIVE" ]; then
  echo "gpu_check: no $ARCHIVE (run scripts/gpu_bundle.sh on the build machine and carry gpu-bundle.tar.gz)" >&2
  exit 2
fi
rm -rf "$BUNDLE" && mkdir -p "$BUNDLE" && tar -C "$BUNDLE" -xzf "$ARCHIVE" || exit 2
# The bundle's C++ runtime only where the machine's is older than the one
# the binaries were built against: Python extensions (PyTorch, ONNX
# Runtime) loaded under the same library path may need a newer one.
SYS_STDCXX=$(ldconfig -p 2>/dev/null | awk '/libstdc\+\+\.so\.6 .*x86-64/ {print $NF; exit}')
if [ -n "$SYS_STDCXX" ] && grep -qa 'GLIBCXX_3\.4\.30' "$SYS_STDCXX"; then
  rm -f "$BUNDLE/lib/libstdc++.so.6" "$BUNDLE/lib/libgcc_s.so.1"
fi
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

# First, in a few seconds: the example model through --backend=cuda,
# naming the GPU and the cuDNN and cuBLASLt copies it loaded, so that a
# missing library or driver shows before any part runs.
SMOKE=$(timeout 60 "$BIN/strider-run" "$ROOT/examples/resnet_block.onnx" --backend=cuda \
          --random-inputs --verbose --quiet 2>&1)
if [ $? -eq 0 ]; then
  note "smoke: $(echo "$SMOKE" | grep -m1 '^cuda program on' | sed 's/, [0-9]* steps:$//'); $(echo "$SMOKE" | grep '^library:' | sed 's/^library: //' | paste -sd ';' -)"
else
  STATUS=1
  note "smoke: the example model FAILED on --backend=cuda: $(echo "$SMOKE" | grep -v '^  ' | tail -2 | paste -sd ' ' -)"
fi

part1() {
  begin_part 150
  echo "== 1. GPU unit tests"
  T "$BIN/StriderCudaTests" --gtest_brief=1 2>&1 | tee "$WORK/unittests.log"
  local RC=${PIPESTATUS[0]}
  keep "$WORK/unittests.log"
  if [ $RC -eq 124 ]; then
    STATUS=1
    note "unit tests: cut short at the part's time limit"
  elif [ $RC -eq 0 ]; then
    note "unit tests: $(grep -E '^\[  PASSED  \]' "$WORK/unittests.log" | tail -1)"
    # Tests of the no-GPU behaviour skip here ("a CUDA device is
    # present"); a GPU test skipping says CUDA saw no device.
    if grep -q '^no CUDA device on this machine' "$WORK/unittests.log"; then
      STATUS=1
      note "unit tests: some skipped on a GPU machine (CUDA sees no device?)"
    fi
  else
    STATUS=1
    note "unit tests: FAILED ($(grep -cE '^\[  FAILED  \]' "$WORK/unittests.log") lines of failures)"
  fi
  grep -h "relayout-bandwidth:" "$WORK/unittests.log" | sed 's/^/   /' || true
}

part2() {
  begin_part 150
  echo "== 2. ONNX node tests: cuda and cpu backends"
  ROOTS=()
  for Sub in node simple pytorch-operator; do
    [ -d "$BUNDLE/testdata/$Sub" ] && ROOTS+=("$BUNDLE/testdata/$Sub")
  done
  if [ ${#ROOTS[@]} -eq 0 ]; then
    note "conformance: no test data in the bundle"
  else
    for B in cuda cpu; do
      T "$BIN/strider-numeric-conformance" --backend=$B "${ROOTS[@]}" > "$WORK/conformance-$B.log" 2>&1
      RC=$?
      [ $RC -eq 124 ] && echo "conformance: cut short at the part's time limit" >> "$WORK/conformance-$B.log"
      grep -E "^FAIL" "$WORK/conformance-$B.log" | head -40
      note "conformance ($B): $(tail -1 "$WORK/conformance-$B.log")"
      [ "$B" = cuda ] && [ $RC -ne 0 ] && STATUS=1
    done
    keep "$WORK/conformance-cuda.log"
  fi
}

part3() {
  begin_part 120
  echo "== 3. model set through --backend=cuda against ONNX Runtime"
  : > "$WORK/modelset.txt"
  T "$PY" "$ROOT/scripts/make_model_set.py" --out "$WORK/models" --variant small > "$WORK/models.log" 2>&1
  local GEN=$?
  if [ $GEN -eq 0 ]; then
    local FAILS=0 COUNT=0 CUT=0
    for M in "$WORK"/models/small/*.onnx; do
      NAME=$(basename "$M" .onnx); DATA="$WORK/models/small/$NAME.data"
      INPUTS=()
      for I in "$DATA"/input_*.npy; do INPUTS+=(--input "$(basename "$I" .npy)=$I"); done
      # fp32: cuDNN/cuBLASLt without TF32. Not fp16: at these sizes no
      # conv pays for its casts, so those runs would repeat these.
      for P in "fp32 1e-4 1e-4"; do
        set -- $P
        COUNT=$((COUNT + 1))
        T "$BIN/strider-run" "$M" --backend=cuda --precision=$1 "${INPUTS[@]}" \
          --compare "$DATA" --rtol $2 --atol $3 > "$WORK/$NAME.$1.log" 2>&1
        case $? in
          0) echo "   $NAME $1: $(grep -m1 'max abs error' "$WORK/$NAME.$1.log" | sed 's/.*max abs/max abs/')" ;;
          124) echo "   $NAME $1: not run (time)" ;;
          *) echo "   $NAME $1: FAILED"; sed 's/^/      /' "$WORK/$NAME.$1.log" | tail -5 ;;
        esac 2>&1 | tee -a "$WORK/modelset.txt"
      done
    done
    FAILS=$(grep -c ': FAILED$' "$WORK/modelset.txt")
    CUT=$(grep -c ': not run (time)$' "$WORK/modelset.txt")
    [ $((FAILS + CUT)) -ne 0 ] && STATUS=1
    note "model set: $((COUNT - FAILS - CUT)) of $COUNT runs within tolerance (fp32 1e-4), $FAILS failed, $CUT not run (time)"
    keep "$WORK/modelset.txt"
  elif [ $GEN -eq 124 ]; then
    STATUS=1
    note "model set: not generated within the part's time limit"
  else
    tail -5 "$WORK/models.log"
    note "model set: not generated (make_model_set.py needs onnx, numpy and onnxruntime)"
  fi
}

part4() {
  begin_part 300
  echo "== 4. benchmark against PyTorch on this GPU"
  # Rows stop starting a minute before the part's deadline.
  T "$PY" "$ROOT/scripts/gpu_bench.py" --strider-run "$BIN/strider-run" --work "$WORK/bench" \
    --deadline $(( PART_END - 60 )) 2>&1 | tee "$WORK/bench.log"
  local RC=${PIPESTATUS[0]}
  keep "$WORK/bench/results.json" "$WORK"/bench/profile_*.txt
  local COUNTS
  COUNTS=$("$PY" -c 'import json,sys
try: rows = json.load(open(sys.argv[1]))
except Exception: rows = []
print("%d rows, %d skipped for time, %d with Strider errors" % (len(rows),
      sum("skipped" in r for r in rows),
      sum(("strider_fp32_error" in r) or ("strider_fp16_error" in r) for r in rows)))' "$WORK/bench/results.json")
  if [ $RC -eq 0 ]; then
    note "benchmark: $COUNTS; table above (also $WORK/bench/results.md)"
  else
    STATUS=1
    [ $RC -eq 124 ] && note "benchmark: cut short at the part's time limit; $COUNTS" \
      || note "benchmark: FAILED ($COUNTS)"
  fi
}

part5() {
  begin_part 240
  echo "== 5. layout choice measured: tuned auto vs all-NCHW vs all-NHWC (fp16, batch 1)"
  CAP=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)
  TARGET=cuda-sm90; [ "${CAP%%.*}" -lt 9 ] 2>/dev/null && TARGET=cuda-sm80
  L="$WORK/layouts"; mkdir -p "$L"
  TUNE="$L/$TARGET-fp16.tune"
  T "$PY" "$ROOT/scripts/make_model_set.py" --out "$WORK/models" --variant full \
    --only resnet50 mobilenetv2 unet > "$WORK/models-full.log" 2>&1
  local GEN=$?
  if [ $GEN -eq 0 ]; then
    local FAILS=0
    {
    printf '   %-12s %10s %10s %10s %9s %9s  %s\n' model auto_ms nchw_ms nhwc_ms nchw/auto nhwc/auto "channels-last (auto)"
    for NAME in resnet50 mobilenetv2 unet; do
      M="$WORK/models/full/$NAME.onnx"
      declare -A MS=()
      for MODE in auto nchw nhwc; do
        DIR="$L/$NAME.$MODE"; rm -rf "$DIR"
        TUNEFLAG=(); [ $MODE = auto ] && TUNEFLAG=(--tune)
        T "$BIN/strider-compile" "$M" -o "$DIR" --target=$TARGET --precision=fp16 \
          --layout=$MODE "${TUNEFLAG[@]}" --tuning-file="$TUNE" --svg=false \
          > "$L/$NAME.$MODE.compile.log" 2>&1
        RC=$?
        if [ $RC -ne 0 ]; then
          FAILS=$((FAILS + 1)); MS[$MODE]=FAIL
          if [ $RC -eq 124 ]; then
            echo "   $NAME $MODE: not compiled (the part's time ran out)"
          else
            echo "   $NAME $MODE: compile FAILED"; tail -3 "$L/$NAME.$MODE.compile.log" | sed 's/^/      /'
          fi
          continue
        fi
        T "$BIN/strider-run" "$DIR" --backend=cuda --precision=fp16 --target=$TARGET \
          --tuning-file="$TUNE" --random-inputs --bench 100 --warmup 10 --json \
          > "$L/$NAME.$MODE.run.json" 2> "$L/$NAME.$MODE.run.log"
        RC=$?
        if [ $RC -eq 124 ]; then
          FAILS=$((FAILS + 1)); MS[$MODE]=FAIL
          echo "   $NAME $MODE: not run (the part's time ran out)"
        elif [ $RC -eq 0 ]; then
          MS[$MODE]=$("$PY" -c 'import json,sys
d = json.load(open(sys.argv[1]))
d = d[0] if isinstance(d, list) else d
print("%.3f" % d["bench"]["median_ms"])' "$L/$NAME.$MODE.run.json" 2>/dev/null)
          if [ -z "${MS[$MODE]}" ]; then
            FAILS=$((FAILS + 1)); MS[$MODE]=FAIL
            echo "   $NAME $MODE: no median in the run's JSON"
          fi
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
    echo "FAILS=$FAILS"
    } 2>&1 | tee "$WORK/layouts.txt"
    FAILS=$(grep -m1 '^FAILS=' "$WORK/layouts.txt" | cut -d= -f2)
    [ "${FAILS:-1}" -ne 0 ] && STATUS=1
    keep "$WORK/layouts.txt" "$TUNE"
    ENTRIES() { if [ -f "$TUNE" ]; then grep -c "^$1 " "$TUNE"; else echo 0; fi; }
    note "layout choice: $FAILS failures; table $TUNE ($(ENTRIES conv) convs, $(ENTRIES algo) algorithms)"
  elif [ $GEN -eq 124 ]; then
    STATUS=1
    note "layout choice: models not generated within the part's time limit"
  else
    tail -5 "$WORK/models-full.log"
    note "layout choice: models not generated (make_model_set.py needs onnx, numpy and onnxruntime)"
  fi
}

part6() {
  begin_part 180
  echo "== 6. third-party models through --backend=cuda against ONNX Runtime"
  if [ ! -f "$BUNDLE/models/SELECTED" ]; then
    note "third-party models: none in the bundle"; return
  fi
  local -a SELECTED
  mapfile -t SELECTED < "$BUNDLE/models/SELECTED"
  : > "$WORK/thirdparty.txt"
  local P RC
  for P in "fp32 1e-3 1e-4" "fp16 5e-2 5e-2"; do
    set -- $P
    T "$PY" "$ROOT/scripts/real_models.py" --suite thirdparty --only "${SELECTED[@]}" \
      --backend cuda --precision $1 --rtol $2 --atol $3 --no-bench \
      --cache "$BUNDLE/models" --work "$WORK/thirdparty-$1" --bin "$BIN" \
      --json "$WORK/thirdparty-$1.json" > "$WORK/thirdparty-$1.log" 2>&1
    RC=$?
    { echo "-- $1 (rtol $2, atol $3)"; grep -v '^real-models:' "$WORK/thirdparty-$1.log"; } \
      | tee -a "$WORK/thirdparty.txt"
    if [ $RC -eq 124 ]; then
      STATUS=1; note "third-party models $1: cut short at the part's time limit"
    else
      [ $RC -ne 0 ] && STATUS=1
      note "third-party models $1 (rtol $2, atol $3): $(grep -m1 ' models: ' "$WORK/thirdparty-$1.log")"
    fi
  done
  keep "$WORK/thirdparty.txt"
}

for P in $PARTS; do
  if ! declare -F "part$P" >/dev/null; then
    echo "gpu_check: no part $P (parts are 1 to 6)" >&2; STATUS=1; continue
  fi
  if [ $(( START + BUDGET - $(date +%s) )) -lt 30 ]; then
    note "part $P: not run (under 30 s of the ${BUDGET} s budget left)"; STATUS=1; continue
  fi
  "part$P"
  printf '%s\n' "${SUMMARY[@]}" > "$WORK/summary.txt"; keep "$WORK/summary.txt"
done

printf '%s\n' "${SUMMARY[@]}" > "$WORK/summary.txt"; keep "$WORK/summary.txt"
echo
echo "gpu_check summary ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)):"
for S in "${SUMMARY[@]}"; do echo "  $S"; done
exit $STATUS
