#!/usr/bin/env bash
# First launch with the twin in a translation unit of its own (issue 13, goal 2), on the GPU machine:
#
#   bash bench/programs/probes/split_twins_probe.sh [--reps 21] SPLIT_DIR
#
# SPLIT_DIR holds sobel_once's transformed source cut in two by hand: main.cu (everything, the twin only
# declared) and twins.cu (the runtime header and the twin). Builds sobel_once three ways and times its one
# launch (from before it, so the first launch's module load counts), alternating, medians:
#   orig   the original program
#   ptb    the transformed program as ptb-transform writes it (twin and original in one module)
#   split  main.cu and twins.cu compiled apart and linked (two modules)
# each in the default launch mode (the original kernel runs) and with PTB_MODE=ptb (the twin runs).
set -u
cd "$(dirname "$0")/../../.."
REPS=21 SDIR=""
while [ $# -gt 0 ]; do case $1 in --reps) REPS=$2; shift;; *) SDIR=$1;; esac; shift; done
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
B=build/split-probe; mkdir -p $B
FLAGS=(-std=c++17 -O2 -arch=sm_90 -lineinfo -I bench/programs -I runtime/include)
"$NVCC" "${FLAGS[@]}" bench/programs/sobel_once.cu -o $B/orig &
"$NVCC" "${FLAGS[@]}" build/bench-programs/sobel_once.cu -o $B/ptb &
"$NVCC" "${FLAGS[@]}" -c "$SDIR/main.cu" -o $B/main.o &
"$NVCC" "${FLAGS[@]}" -c "$SDIR/twins.cu" -o $B/twins.o &
wait
ld -r $B/main.o $B/twins.o -o $B/merged.o && "$NVCC" "${FLAGS[@]}" $B/merged.o -o $B/split || exit 1
run() { env $2 timeout 60 $B/$1 | awk '/^PROGRAM/ {print $4}'; }
declare -A T
FORMS="orig ptb split"
$B/orig >/dev/null
for r in $(seq 1 "$REPS"); do
  for f in $FORMS; do T[$f-auto]+="$(run $f PTB_MODE=auto) "; T[$f-twin]+="$(run $f PTB_MODE=ptb) "; done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
o=$(echo "${T[orig-auto]}" | median)
printf "%-6s %-5s %10s %12s   %s\n" build mode "median ms" "- orig (us)" runs
for m in auto twin; do for f in $FORMS; do
  v=$(echo "${T[$f-$m]}" | median)
  printf "%-6s %-5s %10.4f %+12.1f   %s\n" $f $m "$v" "$(awk -v a="$v" -v o="$o" 'BEGIN {print (a - o) * 1000}')" "${T[$f-$m]}"
done; done
