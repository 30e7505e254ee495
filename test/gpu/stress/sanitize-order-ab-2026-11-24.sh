#!/bin/bash
# compute-sanitizer memcheck on the stress test's first cases (seed 42), the launch order on and off
# (PTB_ORDER_STREAMS=0), in parallel, with a longer no-progress watchdog (H100, 2026-11-24; docs/runtime.md).
set -u
O=${OUT:-out}; mkdir -p "$O" build-stress
/usr/local/cuda/bin/nvcc -std=c++17 -arch=sm_90 -O2 -lineinfo -I runtime/include test/gpu/stress/stress.cu -o build-stress/stress
S=/usr/local/cuda/bin/compute-sanitizer
for o in 1 0; do for seed in 42 46; do
  ( PTB_ORDER_STREAMS=$o timeout -s KILL 250 $S --tool memcheck build-stress/stress --cases 1 --min-launches 0 --seed $seed --hang-seconds 200 > "$O/memcheck-order$o-seed$seed.txt" 2>&1; echo "rc=$?" >> "$O/memcheck-order$o-seed$seed.txt" ) &
done; done
wait
