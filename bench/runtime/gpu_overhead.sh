#!/bin/bash
# One GPU call: build the runtime's overhead benchmark against the runtime before this change (headers
# copied to .device-carry/baseline/include, carried) and after it, run both, then the runtime's GPU tests.
# Usage (repo root, on the GPU machine): bash bench/runtime/gpu_overhead.sh   (logs into $OUT or ./out)
set -u
OUT=${OUT:-out}
mkdir -p "$OUT" build-rt
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
FLAGS="-std=c++17 -arch=sm_90 -O3 -Xcompiler -Wall,-Wextra"
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; $NVCC --version | tail -1; } 2>&1 | tee "$OUT/env.txt"
b() { $NVCC $FLAGS -I "$1" -o "build-rt/$2" "$3" > "build-rt/$2.buildlog" 2>&1; echo "build $2 rc=$?"; }
t0=$(date +%s)
b runtime/include bench_new bench/runtime/bench_overhead.cu &
[ -d .device-carry/baseline/include ] && b .device-carry/baseline/include bench_old bench/runtime/bench_overhead.cu &
b runtime/include test_basic test/gpu/runtime/test_basic.cu &
b runtime/include test_policy test/gpu/runtime/test_policy.cu &
b runtime/include bench_policy bench/runtime/bench_policy.cu &
[ -f examples/colocate/colocate.cu ] && b runtime/include colocate examples/colocate/colocate.cu &
wait
cat build-rt/*.buildlog; echo "build took $(( $(date +%s) - t0 )) s"
r() {  # name limit cmd...
  local n=$1 lim=$2; shift 2
  echo "=== $n" | tee -a "$OUT/log.txt"
  ( cd "$OUT" && timeout -s KILL "$lim" "$@" ) 2>&1 | tee -a "$OUT/log.txt"
  echo "=== $n rc=${PIPESTATUS[0]}" | tee -a "$OUT/log.txt"
}
B=$PWD/build-rt
[ -x $B/bench_old ] && r bench_old 70 $B/bench_old
r bench_new 70 $B/bench_new
r test_basic 60 $B/test_basic
r test_policy 60 $B/test_policy
( export PTB_SMS=0-65 PTB_BLOCKS_PER_SM=2; r "test_policy --env" 40 $B/test_policy --env )
r bench_policy 25 $B/bench_policy
[ -x $B/colocate ] && r colocate 40 $B/colocate
grep -h "rc=\|PASS\|FAIL" "$OUT/log.txt"
