#!/bin/bash
# A/B of the resume batches that wait inside the set (green partitions, docs/runtime.md), on the GPU
# machine: the stress test on the same seeds with PTB_GREEN=0 (resume batches in ordinary streams only, the
# runtime before 2026-11-23 22:40 UTC) and with the partitions, then fresh seeds with them, the wavefront,
# and the runtime tests that involve policies. Logs go to $OUT (or ./out).
#   bash test/gpu/stress/green_ab.sh [SEED ...]
# It needs the runtime of commit 89714d9 (the partitions were taken out by the next commit: no gain on the
# time bound, the wavefront 3x slower; docs/runtime.md); on a later runtime PTB_GREEN changes nothing.
set -u
OUT=${OUT:-out}; mkdir -p "$OUT" build-stress
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
FLAGS="-std=c++17 -arch=sm_90 -O2 -lineinfo -I runtime/include"
SEEDS=${*:-"13151873796227903726 3803700800283139141"}
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; $NVCC --version | tail -1; git rev-parse --short HEAD; git status --porcelain runtime test/gpu | head; } | tee "$OUT/green-env.txt"
$NVCC $FLAGS test/gpu/stress/stress.cu -o build-stress/stress & $NVCC $FLAGS test/gpu/stress/wavefront.cu -o build-stress/wavefront & wait
summary() { grep -E "^(FAIL|stress:)" ; }
{
  for s in $SEEDS; do
    for g in 0 1; do
      echo "=== seed $s PTB_GREEN=$g"
      timeout -s KILL 200 env PTB_GREEN=$g build-stress/stress --seed "$s" --cases 120 | summary
      echo "=== rc=${PIPESTATUS[0]}"
    done
  done
  for i in 1 2; do
    echo "=== fresh seed, green on"
    timeout -s KILL 200 build-stress/stress --cases 120 | grep -E "^(SEED|FAIL|stress:)"
    echo "=== rc=${PIPESTATUS[0]}"
  done
  for pol in "PTB_SMS=0-65" "PTB_SMS=0-65 PTB_BLOCKS_PER_SM=2" "PTB_SMS=7" "PTB_SMS=0,2,5,64-70,131"; do
    echo "=== wavefront $pol"; timeout -s KILL 60 env $pol build-stress/wavefront 2>&1 | tail -3; echo "=== rc=${PIPESTATUS[0]}"
  done
} 2>&1 | tee "$OUT/green-ab.txt"
