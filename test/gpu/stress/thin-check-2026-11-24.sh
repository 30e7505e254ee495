#!/bin/bash
# A short check of the thin-launch request that waits for a launch to have run about 1 ms (the end of the
# device time of 2026-11-24): the stress seed whose 6.5 us launch waited 255 us at bac2ca9, the graph case
# that took 7-9x its bound, one fresh seed. Outputs in $OUT.
set -u
O=${OUT:-out}; mkdir -p "$O" build-stress
date -u > "$O/when.txt"
/usr/local/cuda/bin/nvcc -std=c++17 -arch=sm_90 -O2 -lineinfo -I runtime/include test/gpu/stress/stress.cu -o build-stress/stress
for r in $(seq 8); do
  timeout -s KILL 60 build-stress/stress --seed 10523739377958258358 --cases 1 --min-launches 1 | grep -E "^case" | sed 's/|.*|/| SET |/'
done > "$O/graph-replays.txt" 2>&1
for s in 3803700800283139141 fresh; do
  a=(); [ "$s" != fresh ] && a=(--seed "$s")
  timeout -s KILL 60 build-stress/stress "${a[@]}" > "$O/run.txt" 2>&1; echo "rc=$?" >> "$O/run.txt"
  mv "$O/run.txt" "$O/stress-$(grep -m1 "^SEED" "$O/run.txt" | awk '{print $3}').txt"
done
date -u >> "$O/when.txt"
