#!/bin/bash
# Are the host stalls of launch calls the launch order's, or the host's? Six fresh stress runs, counting the
# launch calls over 100 us in the baseline (every SM, no order) and confined (H100, 2026-11-24).
set -u
O=${OUT:-out}; mkdir -p "$O" build-stress
/usr/local/cuda/bin/nvcc -std=c++17 -arch=sm_90 -O2 -lineinfo -I runtime/include test/gpu/stress/stress.cu -o build-stress/stress
date -u > "$O/when.txt"
for i in 1 2 3 4 5 6; do timeout -s KILL 60 build-stress/stress > "$O/run$i.txt" 2>&1; done
date -u >> "$O/when.txt"
grep -h "^FAIL\|^stress: " "$O"/run*.txt > "$O/summary.txt"
