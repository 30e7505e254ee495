#!/bin/bash
# Does the worst case of the 2026-11-24 two-at-once runs (seed 16223574594728029220, case 51 of the run of
# seed 16223574594728029169) need the cases before it? Runs it after 51, 11 and 1 of them, twice each.
set -u
O=${OUT:-out}; mkdir -p "$O" build-stress
/usr/local/cuda/bin/nvcc -std=c++17 -arch=sm_90 -O2 -lineinfo -I runtime/include test/gpu/stress/stress.cu -o build-stress/stress
for start in 16223574594728029169 16223574594728029209 16223574594728029219; do
  n=$((16223574594728029220 - start + 1))
  for r in 1 2; do
    echo "== from $start ($n cases) run $r"
    timeout -s KILL 100 build-stress/stress --seed $start --cases $n --min-launches 1 | grep -E "^FAIL|16223574594728029220|^stress:" | sed 's/|.*|/| SET |/' | cut -c1-300
  done
done > "$O/stranded-history.txt" 2>&1
