#!/usr/bin/env bash
# A/B/A of the corpus benchmark on the slow programs in one GPU call: A = this tree's runtime, B = the
# runtime carried in .device-carry/old/ptb (copied over runtime/include/ptb for B's build, then restored).
# Run from the repository root on the GPU machine with build/gpu-transformed carried.
set -u
ONLY=${ONLY:-'multi_stream|template_block|return_after|grid3d|reduce_dyn|shared_mem_task|early_return_thread|coop_groups_dyn|transpose|wmma|grid2d'}
OUT=${OUT:-out}
mkdir -p "$OUT"
cp -r runtime/include/ptb build/runtime-A
run() {  # label bindir
  echo "== $1"
  PTB_GPU_BIN=$2 bash test/gpu/run_on_gpu.sh --bench-only --only "$ONLY" build/gpu-transformed 2>&1 | grep -E "^[a-z_0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$" | sed "s/^/$1 /"
}
run A1 build/gpu-bin
cp .device-carry/old/ptb/*.cuh runtime/include/ptb/ && touch runtime/include/ptb/*.cuh
run B build/gpu-bin-B
cp build/runtime-A/*.cuh runtime/include/ptb/
run A2 build/gpu-bin
