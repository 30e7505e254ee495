#!/bin/bash
# The two graph cases over the bound in the b6ea3eb runs (4 or 2 streams, each replaying its own graph of
# large launches under a capped set), replayed 8 times each: default; CUDA_DEVICE_MAX_CONNECTIONS=32 (fewer
# streams sharing a hardware queue); a long strand grace (an anchor that waits for the host, never spills);
# the order off. Which of them makes the slow replays go tells where the time goes.
set -u
O=${OUT:-out}; mkdir -p "$O" build-stress
/usr/local/cuda/bin/nvcc -std=c++17 -arch=sm_90 -O2 -lineinfo -I runtime/include test/gpu/stress/stress.cu -o build-stress/stress
for seed in 10523739377958258358 10493520169583400443; do
  for e in "X=1" "CUDA_DEVICE_MAX_CONNECTIONS=32" "PTB_STRAND_GRACE_US=50000" "CUDA_DEVICE_MAX_CONNECTIONS=1"; do
    for r in 1 2 3 4 5 6 7 8; do
      echo "== $seed $e $r"; env $e timeout -s KILL 60 build-stress/stress --seed $seed --cases 1 --min-launches 1 | grep -E "^FAIL|^case" | sed 's/|.*|/| SET |/'
    done
  done
done > "$O/graph-strand.txt" 2>&1
