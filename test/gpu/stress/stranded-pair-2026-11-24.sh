#!/bin/bash
# Replays of the worst case of the 2026-11-24 runs under two launches at once (seed 16223574594728029220:
# 2 streams x 2 launches of 496k 32-thread tasks on a ~60% SM set), default, with one launch at a time not
# available as a switch: order off, a short strand grace, and the monitor's answer, to locate the wait.
set -u
O=${OUT:-out}; mkdir -p "$O" build-stress
/usr/local/cuda/bin/nvcc -std=c++17 -arch=sm_90 -O2 -lineinfo -I runtime/include test/gpu/stress/stress.cu -o build-stress/stress
for e in "X=1" "PTB_ORDER_STREAMS=0" "PTB_STRAND_GRACE_US=200" "PTB_STRAND_GRACE_US=20000"; do
  for r in 1 2 3; do
    echo "== $e $r"; env $e timeout -s KILL 60 build-stress/stress --seed 16223574594728029220 --cases 1 --min-launches 1 | grep -E "^FAIL|^case" | sed 's/|.*|/| SET |/'
  done
done > "$O/stranded-pair.txt" 2>&1
