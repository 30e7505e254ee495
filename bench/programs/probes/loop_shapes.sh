#!/usr/bin/env bash
# Runs probes/loop_shapes.cu (why a twin's tasks run slower than a grid's blocks; issue 13, goal 3) on the GPU
# machine, from the repository root, beside stencil2d_chain's original and twin for scale:
#   bash bench/programs/probes/loop_shapes.sh [TRANSFORMED_DIR]     (default build/bench-programs)
set -u
cd "$(dirname "$0")/../../.."
TDIR=${1:-build/bench-programs}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
B=build/loop-shapes && rm -rf $B && mkdir -p $B
FLAGS=(-std=c++17 -O2 -arch=sm_90 -lineinfo)
echo "== loop_shapes.sh: $(date -u '+%F %T') UTC; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
"$NVCC" "${FLAGS[@]}" bench/programs/probes/loop_shapes.cu -o $B/loop_shapes &
"$NVCC" "${FLAGS[@]}" -I bench/programs bench/programs/stencil2d_chain.cu -o $B/orig &
. bench/programs/script_lib.sh
mapfile -t TW < <(transformed_sources "$TDIR" stencil2d_chain)
[ -f "$TDIR/stencil2d_chain.cu" ] && "$NVCC" "${FLAGS[@]}" -I bench/programs -I runtime/include "${TW[@]}" -o $B/ptb &
wait
$B/loop_shapes --steps 2000 --reps 7
$B/loop_shapes --w 512 --h 512 --steps 2000 --reps 7
if [ -x $B/ptb ]; then
  echo "== stencil2d_chain --steps 2000, original and twin (PTB_MODE=ptb), 5 each, alternating"
  for r in 1 2 3 4 5; do
    $B/orig --steps 2000 | sed 's/^/orig /'
    PTB_MODE=ptb $B/ptb --steps 2000 | sed 's/^/twin /'
  done
fi
