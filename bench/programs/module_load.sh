#!/usr/bin/env bash
# Where the first launch's module-load time goes (issue 13, goal 2), on the GPU machine (repository root),
# after transform.sh here:
#
#   bash bench/programs/module_load.sh [--reps 41] [TRANSFORMED_DIR]
#
# Builds sobel_once's device code four ways (orig: the original; header: the original with
# <ptb/ptb.cuh> included; big: the original and a large kernel it never launches, probes/unused_kernels.cuh;
# ptb: the transformed source), each as a cubin, a fatbin (nvcc's default compression) and an
# uncompressed fatbin (-no-compress), with and without -lineinfo, and times loading
# each image with the driver API (probes/module_load.cu: load, get the original kernel, launch it once, unload;
# medians), through the module API and through the library API (which the CUDA runtime uses). The loads
# run lazily (CUDA's default) and eagerly.
set -u
cd "$(dirname "$0")/../.."
REPS=41 TDIR=build/bench-programs
while [ $# -gt 0 ]; do
  case $1 in --reps) REPS=$2; shift;; *) TDIR=$1;; esac; shift
done
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
B=build/module-load; mkdir -p $B
FLAGS=(-std=c++17 -O2 -arch=sm_90 -I bench/programs -I runtime/include)
"$NVCC" -O2 -std=c++17 bench/programs/probes/module_load.cu -o $B/module_load -lcuda || exit 1
declare -A SRC=([orig]=bench/programs/sobel_once.cu [header]=bench/programs/sobel_once.cu
                [big]=bench/programs/sobel_once.cu [ptb]=$TDIR/sobel_once.cu)
IMAGES=()
for f in orig header big ptb; do
  extra=()
  [ $f = header ] && extra=(-include ptb/ptb.cuh)
  [ $f = big ] && extra=(-include bench/programs/probes/unused_kernels.cuh -DPTB_UNUSED_BIG)
  for li in "" -lineinfo; do
    tag=$f${li:+-li}
    "$NVCC" "${FLAGS[@]}" "${extra[@]}" $li -cubin "${SRC[$f]}" -o $B/$tag.cubin &
    "$NVCC" "${FLAGS[@]}" "${extra[@]}" $li -fatbin "${SRC[$f]}" -o $B/$tag.fatbin &
    "$NVCC" "${FLAGS[@]}" "${extra[@]}" $li -no-compress -fatbin "${SRC[$f]}" -o $B/$tag-nocompress.fatbin &
    IMAGES+=($B/$tag.cubin $B/$tag.fatbin $B/$tag-nocompress.fatbin)
  done
done
wait
for i in "${IMAGES[@]}"; do [ -s "$i" ] || { echo "build of $i failed"; exit 1; }; done
echo "== $(date -u '+%F %T') UTC; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null); $("$NVCC" --version | tail -1)"
echo "== tree: $(git rev-parse --short HEAD 2>/dev/null)"
for api in "" --library; do
  $B/module_load --reps "$REPS" $api _Z5sobelPKhPtii "${IMAGES[@]}"
  CUDA_MODULE_LOADING=EAGER $B/module_load --reps "$REPS" $api _Z5sobelPKhPtii "${IMAGES[@]}"
done
