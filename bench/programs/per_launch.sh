#!/usr/bin/env bash
# Where a twin's per-launch cost goes (issue 13, goal 3), on the GPU machine (repository root):
#
#   bash bench/programs/per_launch.sh [--reps 5] [--steps 5000] [--profile DIR] [TRANSFORMED_DIR]
#
# stencil2d_chain (2 x --steps dependent launches in one stream), original and transformed
# (PTB_MODE=ptb: a twin for every launch), built as run_on_gpu.sh builds them.
#
# 1. Sizes and tunings. At three grid sizes:
#      2048x2048  16384 blocks of 32x8 (the benchmark's size: about 15.5 tasks per worker, 1056 workers)
#      512x512     1024 blocks: one task per worker
#      64x32          8 blocks: the fixed cost of a launch, almost no work
#    and, at 2048x2048, the twin under tunings: first16 (PTB_FIRST_CHUNK=16: 16 x 1056 >= 16384, no claim),
#    nocheck (PTB_CHECK_CYCLES=2^30), both.
# 2. Phase stamps (probes/phase_stamps.cuh) of the last launch of a short run, per runtime: when the
#    workers enter, publish their first run, find no task, and when the launch's close ends. (Needs the
#    program transformed with its twins in one file (--twins-together): the stamps header defines a
#    host object and cannot go into both parts of a twins-apart build, whose stamp builds print "no build".)
# 3. With ncu: the duration of one kernel of each form at 2048x2048 (launches serialized, caches flushed).
# Forms alternate within each repetition. Prints the median gpu_ms per form and the cost per launch over
# the original of the same size ((form - orig) / launches, in us).
# --profile DIR: only build, then write ncu's reports of one flux launch of each form (speed of light, warp
# states, memory, and the stall samples per SASS line) to DIR, and stop.
set -u
cd "$(dirname "$0")/../.."
. bench/programs/script_lib.sh
REPS=5 STEPS=5000 TDIR=build/bench-programs PROFILE=""
while [ $# -gt 0 ]; do
  case $1 in --reps) REPS=$2; shift;; --steps) STEPS=$2; shift;; --profile) PROFILE=$2; shift;; *) TDIR=$1;; esac; shift
done
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
B=build/per-launch
rm -rf $B && mkdir -p $B
FLAGS=(-std=c++17 -O2 -arch=sm_90 -lineinfo -I bench/programs)
run_header per_launch.sh
mapfile -t TW < <(transformed_sources "$TDIR" stencil2d_chain)
"$NVCC" "${FLAGS[@]}" bench/programs/stencil2d_chain.cu -o $B/orig &
"$NVCC" "${FLAGS[@]}" -I runtime/include "${TW[@]}" -o $B/ptb &
if [ -z "$PROFILE" ]; then
  "$NVCC" "${FLAGS[@]}" -I runtime/include -DPTB_DEBUG_STAMPS -include bench/programs/probes/phase_stamps.cuh \
    "$TDIR/stencil2d_chain.cu" -o $B/stamps-runtime &
fi
wait
for f in orig ptb; do [ -x $B/$f ] || { echo "build of $f failed"; exit 1; }; done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$PROFILE" ]; then
  mkdir -p "$PROFILE"
  for f in orig twin; do
    bin=$B/ptb env=(PTB_MODE=ptb); [ $f = orig ] && { bin=$B/orig; env=(); }
    sel=(-k regex:^flux --launch-skip 100 --launch-count 1)
    env ${env[@]+"${env[@]}"} "$NCU" --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis \
      --section Occupancy --section LaunchStats "${sel[@]}" $bin --steps 150 >"$PROFILE/ncu-$f.txt" 2>&1
    env ${env[@]+"${env[@]}"} "$NCU" --section WarpStateStats --section SourceCounters --page source --print-source sass \
      "${sel[@]}" $bin --steps 150 >"$PROFILE/ncu-sass-$f.txt" 2>&1
  done
  exit 0
fi

launches=$((2 * STEPS))
per_launch() { awk -v m="$1" -v o="$2" -v n=$launches 'BEGIN {printf "%+.2f", (m - o) * 1000 / n}'; }
declare -A T
# run <form> <w> <h>: prints gpu_ms (FAIL on a wrong result)
run() {
  local bin=$B/ptb env=(PTB_MODE=ptb)
  case $1 in
    orig) bin=$B/orig; env=();;
    twin) ;;
    first16) env+=(PTB_FIRST_CHUNK=16);;
    nocheck) env+=(PTB_CHECK_CYCLES=1073741824);;
    both) env+=(PTB_FIRST_CHUNK=16 PTB_CHECK_CYCLES=1073741824);;
    *) bin=$B/$1;;
  esac
  [ -x "$bin" ] || { echo "nobuild"; return; }
  env ${env[@]+"${env[@]}"} timeout 60 $bin --w $2 --h $3 --steps $STEPS | awk '/^PROGRAM/ {print $4} /^FAIL/ {print "FAIL"}'
}
$B/orig --steps 10 >/dev/null

echo "== 1. sizes and tunings ($REPS runs per form)"
SIZES=("2048 2048" "512 512" "64 32")
for r in $(seq 1 "$REPS"); do
  for s in "${SIZES[@]}"; do
    set -- $s
    forms=(orig twin); [ "$1" = 2048 ] && forms=(orig twin first16 nocheck both)
    [ $((r % 2)) = 0 ] && forms=($(printf '%s\n' "${forms[@]}" | tac))
    for f in "${forms[@]}"; do T["$f-$1"]+="$(run "$f" "$1" "$2") "; done
  done
done
printf '%-10s %-8s %10s %14s   %s\n' size form median_ms us/launch runs
for s in "${SIZES[@]}"; do
  set -- $s
  o=$(echo "${T[orig-$1]}" | median)
  forms=(orig twin); [ "$1" = 2048 ] && forms=(orig twin first16 nocheck both)
  for f in "${forms[@]}"; do
    m=$(echo "${T[$f-$1]}" | median)
    printf '%-10s %-8s %10s %14s   %s\n' "$1x$2" "$f" "$m" "$(per_launch "$m" "$o")" "${T[$f-$1]}"
  done
done

echo "== 2. phase stamps of the last launch of --steps 50 (PTB_MODE=ptb)"
for v in runtime; do
  for s in "2048 2048" "64 32"; do
    set -- $s
    [ -x $B/stamps-$v ] || { echo "$v: no build"; continue; }
    echo "$v ${1}x$2: $(PTB_MODE=ptb timeout 60 $B/stamps-$v --steps 50 --w $1 --h $2 | grep '^STAMPS')"
  done
done

if [ -n "$NCU" ]; then
  echo "== 3. one kernel's duration (ncu gpu__time_duration, launches 201-220 of each kernel at 2048x2048, --steps 300, median)"
  for f in orig twin first16; do
    env=(); bin=$B/ptb
    case $f in orig) bin=$B/orig;; twin) env=(PTB_MODE=ptb);; first16) env=(PTB_MODE=ptb PTB_FIRST_CHUNK=16);; esac
    for k in flux update; do
      d=$(env ${env[@]+"${env[@]}"} timeout 60 "$NCU" --csv --print-units base --metrics gpu__time_duration.sum -k "regex:^$k" \
            --launch-skip 200 --launch-count 20 $bin --steps 300 2>/dev/null |
          awk -F'","' '/gpu__time_duration/ {gsub(/[",]/, "", $NF); print $NF}' | median)
      echo "$f $k ${d} ns"
    done
  done
else
  echo "== 3. ncu not found: no per-kernel durations"
fi
