#!/usr/bin/env bash
# Build the artifact loader's libFuzzer target with clang (test/fuzz) and
# run it for a bounded time on the corpus in the repo (test/fuzz/corpus;
# new inputs it finds go to a scratch copy, not into the repo). Exits
# non-zero on any finding (crash, sanitizer report, leak, timeout).
#
#   scripts/fuzz_artifact.sh [SECONDS] [BUILD_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_TO_RUN="${1:-60}"
BUILD="${2:-$ROOT/build/fuzz}"
CXX_BIN="${STRIDER_FUZZ_CXX:-clang++-14}"
CC_BIN="${STRIDER_FUZZ_CC:-clang-14}"
if ! command -v "$CXX_BIN" >/dev/null; then
  echo "fuzz_artifact: $CXX_BIN not found (scripts/setup.sh installs clang-14)" >&2
  exit 1
fi
cmake -S "$ROOT/test/fuzz" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$CC_BIN" -DCMAKE_CXX_COMPILER="$CXX_BIN" >/dev/null
ninja -C "$BUILD" -j "${STRIDER_JOBS:-2}" artifact-fuzzer >/dev/null
WORK="$BUILD/corpus"
rm -rf "$WORK" "$BUILD/findings"
mkdir -p "$WORK" "$BUILD/findings"
cp "$ROOT"/test/fuzz/corpus/* "$WORK"/
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
"$BUILD/artifact-fuzzer" "$WORK" -max_total_time="$SECONDS_TO_RUN" \
  -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$BUILD/findings/" 2>"$BUILD/fuzz.log" || {
    tail -40 "$BUILD/fuzz.log" >&2
    echo "fuzz_artifact: a finding; inputs in $BUILD/findings" >&2
    exit 1
  }
grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$BUILD/fuzz.log" || true
echo "fuzz_artifact: no finding in ${SECONDS_TO_RUN} s"
