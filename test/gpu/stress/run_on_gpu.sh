#!/bin/bash
# Builds and runs the runtime's stress tests on the GPU machine (no clang needed): the wavefront shape
# that hung (issue 10) under several policies, then the random stress test. Logs go to $OUT (or ./out).
#   bash test/gpu/stress/run_on_gpu.sh [--cases N] [--seed S] [--sanitize]
set -u
OUT=${OUT:-out}; mkdir -p "$OUT" build-stress
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
FLAGS="-std=c++17 -arch=sm_90 -O2 -lineinfo -I runtime/include"
ARGS=(); SAN=0
while [ $# -gt 0 ]; do case $1 in --sanitize) SAN=1;; *) ARGS+=("$1");; esac; shift; done
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; $NVCC --version | tail -1; git rev-parse --short HEAD 2>/dev/null; } | tee "$OUT/stress-env.txt"
$NVCC $FLAGS test/gpu/stress/wavefront.cu -o build-stress/wavefront & $NVCC $FLAGS test/gpu/stress/stress.cu -o build-stress/stress & wait
rc=0
run() {  # run <limit s> <env/cmd...>
  local lim=$1; shift
  echo "=== $*"
  timeout -s KILL "$lim" env "$@" 2>&1 | tail -n "${TAILN:-8}"
  local r=${PIPESTATUS[0]}; echo "=== rc=$r"; [ "$r" -ne 0 ] && rc=1
}
{
  W=build-stress/wavefront
  # PTB_MODE=ptb: the twins unconfined (the reference); PTB_MODE=auto with no policy: the original kernels
  # (what a program gets by default, since 2026-11-23); the PTB_SMS runs: twins, confined (automatic mode).
  for pol in "PTB_MODE=ptb" "PTB_MODE=auto" "PTB_SMS=0-65" "PTB_SMS=0-65 PTB_BLOCKS_PER_SM=2" "PTB_SMS=0-100 PTB_BLOCKS_PER_SM=3" "PTB_SMS=7" "PTB_SMS=0,2,5,64-70,131"; do
    run 60 $pol $W
    run 60 $pol $W --width 20 --rounds 3
  done
  run 60 PTB_SMS=0-65 $W --width 60 --malloc-every 5
  run 60 PTB_SMS=0-65 CUDA_MODULE_LOADING=EAGER $W
  TAILN=400 run 560 build-stress/stress "${ARGS[@]}"
} 2>&1 | tee "$OUT/stress.txt"
# (the block ran in a pipeline's subshell: its rc is lost; the runs' statuses are in the output)
grep -qE "^=== rc=[1-9]" "$OUT/stress.txt" && rc=1
exit $rc
