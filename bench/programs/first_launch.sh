#!/usr/bin/env bash
# Where the first launch's extra time goes (issue 13, goal 2), on the GPU machine (repository root):
#
#   bash bench/programs/first_launch.sh [--reps 9] [--no-lineinfo] [--lazy-only] [--nvcc-flags "..."] [TRANSFORMED_DIR]
#
# sobel_once (one launch, timed from before it) in four builds, each run --reps times, alternating:
#   orig      the original program
#   header    the original with <ptb/ptb.cuh> included first (the runtime's device code and globals in the
#             module, no twin kernel, no runtime call)
#   auto      the transformed program, default launch mode (runs the original kernel)
#   twin      the transformed program, PTB_MODE=ptb
#   small     the original plus one small kernel it never launches (probes/unused_kernels.cuh)
#   big       the original plus one large kernel (about the twin's size) it never launches
#   many      the original plus 16 small kernels it never launches
# each with CUDA's default lazy module loading and with CUDA_MODULE_LOADING=EAGER (modules loaded when the
# context is made, before the timer starts). Prints the median gpu_ms per build and loading, the
# difference to orig in us, and the size of each build's device code (cuobjdump's ELF of sm_90).
set -u
cd "$(dirname "$0")/../.."
REPS=9 TDIR=build/bench-programs LINEINFO=-lineinfo LOADINGS="lazy eager" EXTRA=""
while [ $# -gt 0 ]; do
  case $1 in --reps) REPS=$2; shift;; --no-lineinfo) LINEINFO="";; --lazy-only) LOADINGS=lazy;; --nvcc-flags) EXTRA=$2; shift;; *) TDIR=$1;; esac; shift
done
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
B=build/first-launch; mkdir -p $B
FLAGS=(-std=c++17 -O2 -arch=sm_90 $LINEINFO $EXTRA -I bench/programs)
echo "nvcc ${FLAGS[*]}"
"$NVCC" "${FLAGS[@]}" bench/programs/sobel_once.cu -o $B/orig &
"$NVCC" "${FLAGS[@]}" -I runtime/include -include ptb/ptb.cuh bench/programs/sobel_once.cu -o $B/header &
"$NVCC" "${FLAGS[@]}" -I runtime/include "$TDIR/sobel_once.cu" -o $B/ptb &
"$NVCC" "${FLAGS[@]}" -include bench/programs/probes/unused_kernels.cuh -DPTB_UNUSED_SMALL bench/programs/sobel_once.cu -o $B/small &
"$NVCC" "${FLAGS[@]}" -include bench/programs/probes/unused_kernels.cuh -DPTB_UNUSED_BIG bench/programs/sobel_once.cu -o $B/big &
"$NVCC" "${FLAGS[@]}" -include bench/programs/probes/unused_kernels.cuh -DPTB_UNUSED_MANY=16 bench/programs/sobel_once.cu -o $B/many &
wait
for f in orig header ptb small big many; do
  [ -x $B/$f ] || { echo "build $f failed"; exit 1; }
  rm -rf $B/elf-$f; mkdir -p $B/elf-$f && (cd $B/elf-$f && /usr/local/cuda/bin/cuobjdump -xelf all ../$f >/dev/null 2>&1)
  echo "device code of $f: $(cat $B/elf-$f/*.cubin 2>/dev/null | wc -c) bytes of cubin, kernels: $(/usr/local/cuda/bin/cuobjdump -sass $B/$f 2>/dev/null | grep -c 'Function :')"
done
run() {  # run <form> <loading>: prints gpu_ms
  local bin env=()
  case $1 in orig) bin=$B/orig;; header) bin=$B/header;; small) bin=$B/small;; big) bin=$B/big;; many) bin=$B/many;; auto) bin=$B/ptb;; twin) bin=$B/ptb; env=(PTB_MODE=ptb);; esac
  [ "$2" = eager ] && env+=(CUDA_MODULE_LOADING=EAGER)
  env ${env[@]+"${env[@]}"} timeout 60 $bin | awk '/^PROGRAM/ {print $4}'
}
declare -A T
for l in $LOADINGS; do for f in orig header small big many auto twin; do T[$f-$l]=""; done; done
$B/orig >/dev/null  # warm-up
for r in $(seq 1 "$REPS"); do
  for l in $LOADINGS; do for f in orig header small big many auto twin; do T[$f-$l]+="$(run $f $l) "; done; done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf "%-8s %-6s %10s %12s   %s\n" build loading "median ms" "- orig (us)" "runs"
for l in $LOADINGS; do
  o=$(echo "${T[orig-$l]}" | median)
  for f in orig header small big many auto twin; do
    m=$(echo "${T[$f-$l]}" | median)
    printf "%-8s %-6s %10.4f %+12.1f   %s\n" $f $l "$m" "$(awk -v m="$m" -v o="$o" 'BEGIN {print (m - o) * 1000}')" "${T[$f-$l]}"
  done
done
