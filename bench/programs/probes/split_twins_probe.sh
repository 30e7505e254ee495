#!/usr/bin/env bash
# First launch with the twin in a translation unit of its own (issue 13, goal 2), on the GPU machine:
#
#   bash bench/programs/probes/split_twins_probe.sh [--reps 21] [TOGETHER_DIR]
#
# TOGETHER_DIR (default build/bench-programs) holds sobel_once's transformed source with its twin in it
# (bench/programs/transform.sh with PTB_TWINS_APART=0). The script cuts it in two (as it was cut by hand
# for the recorded run): main.cu, everything with the twin only declared, and twins.cu, the runtime header
# and the twin; the discovery kernel stays in main.cu's module. Builds sobel_once three ways and times its one
# launch (from before it, so the first launch's module load counts), alternating, medians:
#   orig   the original program
#   ptb    the transformed program as ptb-transform writes it (twin and original in one module)
#   split  main.cu and twins.cu compiled apart and linked (two modules)
# each in the default launch mode (the original kernel runs) and with PTB_MODE=ptb (the twin runs).
set -u
cd "$(dirname "$0")/../../.."
REPS=21 TDIR=build/bench-programs
while [ $# -gt 0 ]; do case $1 in --reps) REPS=$2; shift;; *) TDIR=$1;; esac; shift; done
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
B=build/split-probe; mkdir -p $B
SDIR=$B/src; mkdir -p $SDIR
grep -q "PTB_TWINS_PART" "$TDIR/sobel_once.cu" && { echo "$TDIR/sobel_once.cu has its twins apart already (PTB_TWINS_APART=0)"; exit 1; }
# the twin's text: from its comment line to the line before its launch wrapper
awk '/^\/\/ PTB twin of sobel/ {t=1} /^static inline void sobel__ptb_launch/ {t=0} t' "$TDIR/sobel_once.cu" > $SDIR/twin.txt
{ echo '#include "ptb/ptb.cuh"'; cat $SDIR/twin.txt; } > $SDIR/twins.cu
awk 'BEGIN {d="__global__ void sobel__ptb(const unsigned char* __restrict__ img, unsigned short* __restrict__ out, int w, int h, const ::ptb::Launch ptb_launch);"}
     /^\/\/ PTB twin of sobel/ {t=1; print d} /^static inline void sobel__ptb_launch/ {t=0} !t' "$TDIR/sobel_once.cu" |
  sed 's|^#include ".*bp.cuh"|#include "bp.cuh"|' > $SDIR/main.cu
FLAGS=(-std=c++17 -O2 -arch=sm_90 -lineinfo -I bench/programs -I runtime/include)
"$NVCC" "${FLAGS[@]}" bench/programs/sobel_once.cu -o $B/orig &
"$NVCC" "${FLAGS[@]}" "$TDIR/sobel_once.cu" -o $B/ptb &
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
