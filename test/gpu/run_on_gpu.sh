#!/usr/bin/env bash
# The one command to run on the GPU machine (from the repository root):
#
#   bash test/gpu/run_on_gpu.sh [--original-only] [--bench] [--bench-only] [--only REGEX] [TRANSFORMED_DIR]
#
# For every test/gpu/*.cu it compiles the original (nvcc -std=c++17 -O2 -arch=sm_90 -lineinfo) and the
# transformed copy TRANSFORMED_DIR/<same name> (default build/gpu-transformed/, produced on the development
# machine by test/gpu/transform.sh and carried here), with -I runtime/include -I test/gpu, in parallel
# (xargs -P $JOBS, default 16); then runs both builds of each program one after the other and prints a table.
#   --original-only  build and run only the originals (no transformed directory needed)
#   --bench          afterwards run every program's --bench: in the transformed build it prints
#                    "BENCH name orig_ms ptb_ms ratio"; the table ends with the geometric mean and worst ratio.
#                    With --original-only the originals' --bench run (they print a note with their time).
#   --bench-only     skip the correctness runs (builds are reused when up to date)
#   --only REGEX     only programs whose name matches REGEX
# Logs go to $OUT when it is set (a tarball of all logs plus summary.txt), else to build/gpu-logs/.
# Exit status: 0 when every build and run passed (SKIP counts as passed), 1 otherwise.
set -u
cd "$(dirname "$0")/../.."

ORIGINAL_ONLY=0 BENCH=0 BENCH_ONLY=0 ONLY="" TDIR=""
while [ $# -gt 0 ]; do
  case "$1" in
    --original-only) ORIGINAL_ONLY=1 ;;
    --bench) BENCH=1 ;;
    --bench-only) BENCH=1; BENCH_ONLY=1 ;;
    --only) ONLY="$2"; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) TDIR="$1" ;;
  esac
  shift
done
TDIR="${TDIR:-build/gpu-transformed}"
JOBS="${JOBS:-16}"
# The transformed programs are checked as twins: the runtime's default launch mode (automatic, since
# 2026-11-23) would run their original kernels, since these programs set no policy. PTB_MODE=auto (or a
# PTB_SMS) in the environment checks the dispatch instead. --bench sets the modes itself.
export PTB_MODE="${PTB_MODE:-ptb}"
. test/gpu/lib.sh
NVCC="$(ptb_nvcc)" || exit 1
NVFLAGS=(-std=c++17 -O2 -arch=sm_90 -lineinfo)
BIN="${PTB_GPU_BIN:-build/gpu-bin}"
if [ -n "${OUT:-}" ]; then LOG="$(mktemp -d)/gpu-logs"; else LOG="build/gpu-logs"; fi
mkdir -p "$BIN/orig" "$BIN/ptb" "$LOG"
TIMEOUT="${TEST_TIMEOUT:-60}"

NAMES=()
for f in test/gpu/*.cu; do
  n="$(basename "$f" .cu)"
  if [ -n "$ONLY" ] && ! [[ "$n" =~ $ONLY ]]; then continue; fi
  NAMES+=("$n")
done
[ ${#NAMES[@]} -gt 0 ] || { echo "no programs" >&2; exit 1; }
if [ $ORIGINAL_ONLY = 0 ] && [ ! -d "$TDIR" ]; then
  echo "transformed directory $TDIR not found (run test/gpu/transform.sh on the development machine and carry" \
       "it, or pass --original-only)" >&2
fi

echo "== $(date -u '+%F %T') UTC, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1), $("$NVCC" --version | tail -1), PTB_MODE=$PTB_MODE"
echo "== compiling ${#NAMES[@]} programs (jobs: $JOBS)"

# compile VARIANT NAME: writes $BIN/VARIANT/NAME, or a log ending in "BUILD FAILED"
compile_one() {
  local variant="$1" name="$2" src out log
  out="$BIN/$variant/$name"
  log="$LOG/build-$variant-$name.log"
  if [ "$variant" = orig ]; then
    src="test/gpu/$name.cu"
    extra=(-I test/gpu)
  else
    src="$TDIR/$name.cu"
    extra=(-I runtime/include -I test/gpu)
  fi
  if [ ! -f "$src" ]; then echo "missing $src" >"$log"; rm -f "$out"; return 0; fi
  # up to date? (newer than its source, common.cuh and the runtime headers)
  if [ -x "$out" ] && [ -z "$(find "$src" test/gpu/common.cuh runtime/include -newer "$out" -print -quit 2>/dev/null)" ]; then
    echo "up to date" >"$log"; return 0
  fi
  rm -f "$out"
  # twins apart (transform.sh's default): the twins part is compiled and linked with the program
  [ "$variant" != orig ] && [ -f "$TDIR/$name.twins.cu" ] && extra+=("$TDIR/$name.twins.cu")
  if "$NVCC" "${NVFLAGS[@]}" "${extra[@]}" "$src" -o "$out" >"$log" 2>&1; then :; else echo "BUILD FAILED" >>"$log"; fi
}
export -f compile_one
export BIN LOG TDIR NVCC
export NVFLAGS_STR="${NVFLAGS[*]}"
# arrays do not export: rebuild NVFLAGS inside the subshell
{
  for n in "${NAMES[@]}"; do
    echo "orig $n"
    [ $ORIGINAL_ONLY = 1 ] || echo "ptb $n"
  done
} | xargs -P "$JOBS" -L 1 bash -c 'NVFLAGS=($NVFLAGS_STR); compile_one "$0" "$1"'

# run VARIANT NAME ARGS... -> prints PASS / FAIL / SKIP / NOBUILD / TIMEOUT / CRASH
run_one() {
  local variant="$1" name="$2"; shift 2
  local exe="$BIN/$variant/$name" log="$LOG/run-$variant-$name$([ $# -gt 0 ] && echo -bench).log"
  if [ ! -x "$exe" ]; then echo NOBUILD; return; fi
  timeout "$TIMEOUT" "$exe" "$@" >"$log" 2>&1
  local rc=$?
  if [ $rc = 124 ]; then echo TIMEOUT
  elif grep -q "^FAIL $name" "$log"; then echo FAIL
  elif [ $rc = 0 ] && grep -q "^SKIP $name" "$log"; then echo SKIP
  elif [ $rc = 0 ] && { [ $# -gt 0 ] || grep -q "^PASS $name\$" "$log"; }; then echo PASS
  else echo "CRASH($rc)"
  fi
}

FAILED=0
SUMMARY="$LOG/summary.txt"
: >"$SUMMARY"
say() { echo "$@" | tee -a "$SUMMARY"; }

if [ $BENCH_ONLY = 0 ]; then
  say ""
  say "$(printf '%-30s %-10s %-10s %s' program original transformed 'wall s (orig/ptb)')"
  say "$(printf '%-30s %-10s %-10s %s' ------------------------------ ---------- ---------- -----------------)"
  npass_o=0 npass_t=0
  for n in "${NAMES[@]}"; do
    t0=$(date +%s.%N); so=$(run_one orig "$n"); t1=$(date +%s.%N)
    if [ $ORIGINAL_ONLY = 1 ]; then st="-"; t2=$t1; else st=$(run_one ptb "$n"); t2=$(date +%s.%N); fi
    case "$so" in PASS|SKIP) npass_o=$((npass_o + 1)) ;; *) FAILED=1 ;; esac
    if [ $ORIGINAL_ONLY = 0 ]; then case "$st" in PASS|SKIP) npass_t=$((npass_t + 1)) ;; *) FAILED=1 ;; esac; fi
    say "$(printf '%-30s %-10s %-10s %.2f/%.2f' "$n" "$so" "$st" "$(awk "BEGIN { print $t1 - $t0 }")" "$(awk "BEGIN { print $t2 - $t1 }")")"
  done
  say ""
  say "original: $npass_o/${#NAMES[@]} passed$([ $ORIGINAL_ONLY = 1 ] || echo ", transformed: $npass_t/${#NAMES[@]} passed")"
  # the reasons of failures, from the logs
  for f in "$LOG"/run-*.log; do
    [ -f "$f" ] || continue
    grep -h "^FAIL " "$f" | sed "s|^|  $(basename "$f" .log): |" | tee -a "$SUMMARY"
  done
  for f in "$LOG"/build-*.log; do
    [ -f "$f" ] || continue
    if grep -q "BUILD FAILED\|^missing" "$f"; then
      say "  $(basename "$f" .log): $(grep -m1 -h "error\|^missing" "$f")"
    fi
  done
fi

if [ $BENCH = 1 ]; then
  variant=ptb
  [ $ORIGINAL_ONLY = 1 ] && variant=orig
  say ""
  say "== --bench ($variant builds)"
  BENCHES="$LOG/bench-lines.txt"
  : >"$BENCHES"
  for n in "${NAMES[@]}"; do
    s=$(run_one $variant "$n" --bench)
    lf="$LOG/run-$variant-$n-bench.log"
    if [ "$s" != PASS ]; then FAILED=1; say "$(printf '%-30s bench %s' "$n" "$s")"; continue; fi
    grep -h "^BENCH " "$lf" >>"$BENCHES" || true
    grep -h "^NOTE " "$lf" | tee -a "$SUMMARY" || true
  done
  if [ -s "$BENCHES" ]; then
    say ""
    awk 'BEGIN { printf "%-30s %10s %10s %8s\n", "program", "orig ms", "ptb ms", "ratio" }
         { printf "%-30s %10.4f %10.4f %8.4f\n", $2, $3, $4, $5; s += log($5); k++; if ($5 > w) { w = $5; wn = $2 } }
         END { if (k) printf "geometric mean of %d ratios: %.4f; worst: %.4f (%s)\n", k, exp(s / k), w, wn }' \
      "$BENCHES" | tee -a "$SUMMARY"
  fi
fi

if [ -n "${OUT:-}" ]; then
  cp "$SUMMARY" "$OUT/summary.txt"
  tar -C "$(dirname "$LOG")" -czf "$OUT/gpu-logs.tar.gz" gpu-logs
  echo "logs: \$OUT/gpu-logs.tar.gz, summary: \$OUT/summary.txt"
else
  echo "logs: $LOG"
fi
exit $FAILED
