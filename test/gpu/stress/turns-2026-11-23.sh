#!/bin/bash
# Reproduces test/gpu/stress/results/h100-2026-11-23-turns.txt (run it at commit 32f9262, whose runtime has
# the turns; the next commit took them out again): the stress test with the runtime before
# policy turns (9387709) and with turns, on the same 120 cases (the seed of h100-2026-11-23-final.txt),
# the three cases that were over the time bound there replayed 3 times each, and the runtime's tests.
# Before carrying .device-carry to the GPU machine, on the development machine:
#   mkdir -p .device-carry/oldrt/ptb && for f in device fused host ptb smset trace; do
#     git show 9387709:runtime/include/ptb/$f.cuh > .device-carry/oldrt/ptb/$f.cuh; done
set -u
OUT=${OUT:-out}; mkdir -p "$OUT" build-stress
F="-std=c++17 -arch=sm_90 -O2 -lineinfo"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; } | tee "$OUT/turns-env.txt"
nvcc $F -I runtime/include test/gpu/stress/stress.cu -o build-stress/stress_new &
nvcc $F -I .device-carry/oldrt test/gpu/stress/stress.cu -o build-stress/stress_old &
nvcc $F -I runtime/include test/gpu/stress/wavefront.cu -o build-stress/wavefront &
wait
{
bash test/gpu/runtime/run_on_gpu.sh test_basic test_policy 2>&1 | grep -E "PASS|FAIL|rc=|stranded"
for v in old new; do
  echo "== $v runtime, seed 4477128606541723795, 120 cases"
  timeout -s KILL 200 build-stress/stress_$v --seed 4477128606541723795 2>&1 | grep -E "^FAIL|^stress" | cut -c1-240
done
for s in 4477128606541723809 4477128606541723877 4477128606541723880; do
  for v in old new; do for i in 1 2 3; do
    echo "== $v seed $s #$i: $(timeout -s KILL 60 build-stress/stress_$v --seed $s --cases 1 --min-launches 0 2>&1 | grep -E '^case' | sed 's/.*| base/base/')"
  done; done
done
for pol in "" "PTB_SMS=0-65" "PTB_SMS=7" "PTB_SMS=0,2,5,64-70,131"; do
  echo "== wavefront [$pol]: $(env $pol timeout -s KILL 60 build-stress/wavefront 2>&1 | tail -1)"
done
echo "== new runtime, a fresh seed, 120 cases"
timeout -s KILL 200 build-stress/stress_new 2>&1 | grep -E "^FAIL|^stress" | cut -c1-240
} 2>&1 | tee "$OUT/turns.txt"
