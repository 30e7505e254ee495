#!/bin/bash
# Where the host stalls of the launch calls go (H100, 2026-11-24): eight fresh stress runs with the wait for
# the runtime's lock measured just before each launch call (the stress test prints both for its slowest launch).
set -u
O=${OUT:-out}; mkdir -p "$O" build-stress
/usr/local/cuda/bin/nvcc -std=c++17 -arch=sm_90 -O2 -lineinfo -I runtime/include test/gpu/stress/stress.cu -o build-stress/stress
for i in 1 2 3 4 5 6 7 8; do timeout -s KILL 60 build-stress/stress > "$O/run$i.txt" 2>&1; done
grep -h "^FAIL\|^stress: seed" "$O"/run*.txt > "$O/summary.txt"
