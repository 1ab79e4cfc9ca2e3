#!/usr/bin/env bash
# Build the libFuzzer targets with clang (test/fuzz: ASan + UBSan) and run
# each on its seed corpus (test/fuzz/corpus/<name>; the onnx target also
# gets the models of ONNX's backend node tests), for a time or a number of executions. New inputs go to a scratch
# copy, never into the repo. Exits non-zero on any finding (a crash, a
# sanitizer report, a leak, a timeout, an out-of-memory); the input that
# found it is left in BUILD/findings/<name>/.
#
#   scripts/fuzz.sh [--seconds S | --runs N] [--build DIR] [TARGET...]
#
# TARGET: artifact, lir, npy, onnx (default: all four, one after another),
# or lower (the onnx target's models lowered and run on the CPU backend;
# its build takes about ten more minutes).
# --seconds S: each target runs S seconds (default 30); --runs N: each runs
# N inputs. Prints each target's executions and peak memory.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIMIT="-max_total_time=30"
BUILD="$ROOT/build/fuzz"
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) LIMIT="-max_total_time=$2"; shift 2 ;;
    --runs) LIMIT="-runs=$2"; shift 2 ;;
    --build) BUILD="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    artifact|lir|npy|onnx|lower) TARGETS+=("$1"); shift ;;
    *) echo "fuzz: unknown argument '$1' (--help lists them)" >&2; exit 2 ;;
  esac
done
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(artifact lir npy onnx)
mkdir -p "$BUILD"
BUILD="$(cd "$BUILD" && pwd)" # the fuzzers run in their scratch corpora
CXX_BIN="${STRIDER_FUZZ_CXX:-clang++-14}"
CC_BIN="${STRIDER_FUZZ_CC:-clang-14}"
if ! command -v "$CXX_BIN" >/dev/null; then
  echo "fuzz: $CXX_BIN not found (scripts/setup.sh installs clang-14)" >&2
  exit 1
fi
LOWERING=OFF
case " ${TARGETS[*]} " in *" lower "*) LOWERING=ON ;; esac
cmake -S "$ROOT/test/fuzz" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$CC_BIN" -DCMAKE_CXX_COMPILER="$CXX_BIN" \
  -DSTRIDER_FUZZ_LOWERING="$LOWERING" >/dev/null
ninja -C "$BUILD" -j "${STRIDER_JOBS:-2}" "${TARGETS[@]/%/-fuzzer}" >"$BUILD/build.log" 2>&1 || {
  tail -40 "$BUILD/build.log" >&2
  echo "fuzz: building the fuzzers failed (log: $BUILD/build.log)" >&2
  exit 1
}

export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# ONNX's backend node tests (Debian's libonnx-testdata, which setup.sh
# installs, else the venv's onnx package where it ships them).
NODE_TESTS="$(ls -d /usr/share/libonnx-testdata/data/node \
  "$ROOT"/.venv/lib/python3*/site-packages/onnx/backend/test/data/node 2>/dev/null | head -1 || true)"
for T in "${TARGETS[@]}"; do
  WORK="$BUILD/corpus/$T"
  FINDINGS="$BUILD/findings/$T"
  rm -rf "$WORK" "$FINDINGS"
  mkdir -p "$WORK" "$FINDINGS"
  # The lowering target takes the onnx target's seeds.
  SEEDS="$T"; [ "$T" = lower ] && SEEDS=onnx
  cp "$ROOT/test/fuzz/corpus/$SEEDS"/* "$WORK"/
  if [ "$SEEDS" = onnx ] && [ -n "$NODE_TESTS" ]; then
    for M in "$NODE_TESTS"/*/model.onnx; do
      cp "$M" "$WORK/$(basename "$(dirname "$M")").onnx"
    done
  fi
  # Scratch directory as the working directory: nothing a mutated input
  # names relative to it exists.
  (cd "$WORK" && "$BUILD/$T-fuzzer" "$WORK" $LIMIT -max_len=65536 \
      -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$FINDINGS/") \
      2>"$BUILD/$T.log" || {
    tail -40 "$BUILD/$T.log" >&2
    echo "fuzz: $T-fuzzer found something; its input is in $FINDINGS" >&2
    exit 1
  }
  RUNS=$(grep -m1 "^stat::number_of_executed_units" "$BUILD/$T.log" | awk '{print $2}')
  PEAK=$(grep -m1 "^stat::peak_rss_mb" "$BUILD/$T.log" | awk '{print $2}')
  echo "fuzz: $T-fuzzer: ${RUNS:-?} executions, no finding (peak ${PEAK:-?} MB)"
done
