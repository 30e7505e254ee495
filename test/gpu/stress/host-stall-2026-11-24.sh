#!/bin/bash
# The launches whose launch call stalled on the host at b6ea3eb (H100, 2026-11-24): four cases replayed
# three times each, as they are and with CUDA_DEVICE_MAX_CONNECTIONS=32 (a hardware queue per stream).
set -u
O=${OUT:-out}; mkdir -p "$O" build-stress
/usr/local/cuda/bin/nvcc -std=c++17 -arch=sm_90 -O2 -lineinfo -I runtime/include test/gpu/stress/stress.cu -o build-stress/stress
for s in 17188839707218514416 3803700800283139171 4477128606541723841 13151873796227903833; do
  for e in "X=1" "CUDA_DEVICE_MAX_CONNECTIONS=32"; do
    for r in 1 2 3; do
      echo "== $s $e $r"; env $e timeout -s KILL 60 build-stress/stress --seed $s --cases 1 --min-launches 1 | grep -E "^FAIL|^case" | sed 's/| [0-9,-]*\( cap [0-9]*\)\? |/| SET\1 |/' | cut -c1-400
    done
  done
done > "$O/host-stall.txt" 2>&1
