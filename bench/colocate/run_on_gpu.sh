#!/usr/bin/env bash
# The co-location benchmark (issue 15), on the GPU machine (repository root; nvcc, no clang):
#
#   bash bench/colocate/run_on_gpu.sh [--compile-only] [--no-mps] [TRANSFORMED_DIR] [-- colocate options]
#
# TRANSFORMED_DIR (default build/bench-colocate) is what bench/colocate/transform.sh wrote on the
# development machine: carry it here. Builds build/bench-colocate-bin/colocate (nvcc -std=c++17 -O2
# -arch=sm_90 -I runtime/include; the transformed be_programs.cu, the plain ls_client.cu and colocate.cu,
# and be_pair.cu with the fused kernels transform.sh wrote),
# then runs every configuration in one process (README.md), then, when the MPS daemon can be started
# here, the MPS rows (an LS process and a BE process at CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$MPS_BE_PCT,
# default 50; one run per BE and load), else prints "MPS: not available (<reason>)".
# Everything goes to $OUT (default build/bench-colocate-out) as it comes: colocate.md (the table),
# raw.tsv (every measurement), solo.tsv, sm-*.png and alloc-*.tsv (one traced run of each policy),
# mps.md, run.log. Wall clock: about 6-8 minutes (BUDGET_S, default 330 s, bounds the main run's
# repetitions; the build ~1 minute; MPS ~1 minute); each step is killed if it overruns.
# --compile-only: build with warnings as errors and stop (CI: the ctest bench-colocate-compiles).
# --build-only DIR: build into DIR (DIR/colocate) and stop. PTB_RUNTIME_INCLUDE (default runtime/include)
# is the runtime's include folder for the build (gate_ab.sh builds against another one).
set -u
cd "$(dirname "$0")/../.."
T0=$(date +%s)
COMPILE_ONLY=0 BUILD_ONLY="" MPS=1 TDIR="" ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --compile-only) COMPILE_ONLY=1 ;;
    --build-only) BUILD_ONLY="$2"; shift ;;
    --no-mps) MPS=0 ;;
    --) shift; ARGS=("$@"); break ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d'; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) TDIR="$1" ;;
  esac
  shift
done
TDIR="${TDIR:-build/bench-colocate}"
. test/gpu/lib.sh
NVCC="$(ptb_nvcc)" || exit 1
if [ ! -f "$TDIR/be_programs.cu" ]; then
  echo "ERROR: $TDIR/be_programs.cu is missing. On the development machine run" >&2
  echo "         bash bench/colocate/transform.sh" >&2
  echo "       and carry $TDIR here (this machine has no clang tool to make it)." >&2
  exit 2
fi
ptb_same_sources "$TDIR" bench/colocate/transform.sh || exit 2

# ---- build: the three translation units in parallel, then the link
BIN="build/bench-colocate-bin"
[ $COMPILE_ONLY = 1 ] && BIN="$TDIR/bin"
[ -n "$BUILD_ONLY" ] && BIN="$BUILD_ONLY"
mkdir -p "$BIN"
FLAGS=(-std=c++17 -O2 -arch=sm_90 -I "${PTB_RUNTIME_INCLUDE:-runtime/include}" -I bench/colocate)
[ $COMPILE_ONLY = 1 ] && FLAGS+=(-Xcompiler -Wall,-Wextra -Werror all-warnings)
rm -f "$BIN"/*.o "$BIN/colocate"
"$NVCC" "${FLAGS[@]}" -c "$TDIR/be_programs.cu" -o "$BIN/be_programs.o" >"$BIN/be_programs.log" 2>&1 &
"$NVCC" "${FLAGS[@]}" -c bench/colocate/ls_client.cu -o "$BIN/ls_client.o" >"$BIN/ls_client.log" 2>&1 &
"$NVCC" "${FLAGS[@]}" -c bench/colocate/colocate.cu -o "$BIN/colocate.o" >"$BIN/colocate.log" 2>&1 &
"$NVCC" "${FLAGS[@]}" -I "$TDIR" -c bench/colocate/be_pair.cu -o "$BIN/be_pair.o" >"$BIN/be_pair.log" 2>&1 &
"$NVCC" "${FLAGS[@]}" -I "$TDIR" -c bench/colocate/be_pair_memory.cu -o "$BIN/be_pair_memory.o" >"$BIN/be_pair_memory.log" 2>&1 &
wait
for u in be_programs ls_client colocate be_pair be_pair_memory; do
  if [ ! -f "$BIN/$u.o" ] || [ -s "$BIN/$u.log" -a $COMPILE_ONLY = 1 ]; then
    echo "BUILD FAILED: $u"; cat "$BIN/$u.log"; exit 1
  fi
done
"$NVCC" -arch=sm_90 "$BIN"/be_programs.o "$BIN"/ls_client.o "$BIN"/colocate.o "$BIN"/be_pair.o "$BIN"/be_pair_memory.o -lcuda -o "$BIN/colocate" >"$BIN/link.log" 2>&1 ||
  { echo "LINK FAILED"; cat "$BIN/link.log"; exit 1; }
if [ $COMPILE_ONLY = 1 ]; then
  echo "run_on_gpu.sh --compile-only: bench/colocate built ($BIN/colocate), no warnings"
  exit 0
fi
if [ -n "$BUILD_ONLY" ]; then
  echo "run_on_gpu.sh --build-only: bench/colocate built ($BIN/colocate) against ${PTB_RUNTIME_INCLUDE:-runtime/include}"
  exit 0
fi

OUT="${OUT:-build/bench-colocate-out}"
mkdir -p "$OUT"
LOG="$OUT/run.log"
say() { echo "$@" | tee -a "$LOG"; }
: >"$LOG"
say "== bench/colocate: LS beside BE (issue 15)"
say "== $(date -u '+%F %T') UTC; $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1); $("$NVCC" --version | tail -1)"
say "== tree: $(git rev-parse --short HEAD 2>/dev/null || echo 'no git here')$([ -n "$(git status --porcelain -- bench/colocate runtime/include 2>/dev/null)" ] && echo ' (bench/colocate or runtime/include modified)')"
[ -f "$TDIR/SOURCE.txt" ] && sed 's/^/== transformed sources: /' "$TDIR/SOURCE.txt" | tee -a "$LOG"
say "== built in $(( $(date +%s) - T0 )) s"

# ---- the main run: every configuration, one process (eager module loading: README.md)
BUDGET_S="${BUDGET_S:-330}"
export CUDA_MODULE_LOADING=EAGER
timeout -s KILL $(( BUDGET_S + 150 )) "$BIN/colocate" --out "$OUT" --budget-s "$BUDGET_S" "${ARGS[@]}" 2>&1 | tee -a "$LOG"
RC=${PIPESTATUS[0]}
[ $RC = 137 ] && say "== KILLED: the main run overran $(( BUDGET_S + 150 )) s (raw.tsv holds what was measured)"
say "== main run: exit $RC at +$(( $(date +%s) - T0 )) s"

# ---- MPS: only where the daemon can be started (a private pipe directory; stopped afterwards)
mps_rows() {
  local why=""
  if [ $MPS = 0 ]; then why="--no-mps"
  elif ! command -v nvidia-cuda-mps-control >/dev/null; then why="nvidia-cuda-mps-control not found"
  elif [ ! -f "$OUT/solo.tsv" ]; then why="the main run wrote no solo.tsv"
  fi
  if [ -n "$why" ]; then say "MPS: not available ($why)"; return; fi
  export CUDA_MPS_PIPE_DIRECTORY="$(mktemp -d)" CUDA_MPS_LOG_DIRECTORY="$(mktemp -d)"
  if ! nvidia-cuda-mps-control -d >"$OUT/mps-start.log" 2>&1; then
    say "MPS: not available (the daemon did not start: $(head -c 200 "$OUT/mps-start.log" | tr '\n' ' '))"; return
  fi
  if ! timeout 60 "$BIN/colocate" --role probe >"$OUT/mps-probe.log" 2>&1; then
    say "MPS: not available (a client could not connect: $(tail -c 300 "$OUT/mps-probe.log" $CUDA_MPS_LOG_DIRECTORY/control.log 2>/dev/null | tr '\n' ' '))"
    echo quit | nvidia-cuda-mps-control; return
  fi
  local pct="${MPS_BE_PCT:-50}"
  say "MPS: daemon running; BE at CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct, LS at 100; one run per BE and load"
  {
    echo "| BE | load | configuration | LS p50 us | LS p99 us | LS p99.9 us | BE tasks/s | checks |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
  } >"$OUT/mps.md"
  local be load rate
  for be in compute memory wmma; do
    while read -r tag load rate; do
      [ "$tag" = rate ] || continue
      [ $(( $(date +%s) - T0 )) -gt 500 ] && { say "MPS: stopped (time budget)"; break 2; }
      CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct timeout 40 "$BIN/colocate" --role be --be-kind "$be" --settle 0.8 --secs 1.2 \
        >"$OUT/mps-be.log" 2>&1 &
      local bp=$!
      CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100 timeout 40 "$BIN/colocate" --role ls --rate "$rate" --settle 0.3 --secs 1.0 \
        >"$OUT/mps-ls.log" 2>&1
      wait $bp
      local l b
      l=$(grep '^ROLE ls' "$OUT/mps-ls.log"); b=$(grep '^ROLE be' "$OUT/mps-be.log")
      say "  MPS $be load $load: ${l:-LS FAILED} / ${b:-BE FAILED}"
      echo "| $be | $load | mps $pct% | $(echo "$l" | awk '{print $6" | "$8" | "$10}') | $(echo "$b" | awk '{print $5}') | $( [ "$(echo "$l $b" | grep -o 'check ok' | wc -l)" = 2 ] && echo ok || echo FAILED) |" >>"$OUT/mps.md"
    done <"$OUT/solo.tsv"
  done
  say "MPS rows (absolute; the solo values are in colocate.md; BE's window starts before LS's, see README.md):"
  tee -a "$LOG" <"$OUT/mps.md"
  echo quit | nvidia-cuda-mps-control
}
mps_rows
say "== done at +$(( $(date +%s) - T0 )) s; results in $OUT"
exit $RC
