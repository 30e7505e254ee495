#!/bin/bash
# Builds and runs the runtime's stress tests on the GPU machine (no clang needed): the wavefront shape
# that hung (issue 10) under several policies, the host-side shapes of real programs (host_shapes.cu:
# seeds 1..HOST_SEEDS, each with every end, PTB_STRICT=1; a few seeds under compute-sanitizer memcheck
# and, built with -fsanitize=thread, under ThreadSanitizer), then the random stress test. Logs go to
# $OUT (or ./out).
#   bash test/gpu/stress/run_on_gpu.sh [--cases N] [--seed S] [--sanitize]
#   ONLY=host_shapes bash test/gpu/stress/run_on_gpu.sh     (the host shapes alone)
set -u
OUT=${OUT:-out}; mkdir -p "$OUT" build-stress
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
FLAGS="-std=c++17 -arch=sm_90 -O2 -lineinfo -I runtime/include"
ARGS=(); SAN=0
while [ $# -gt 0 ]; do case $1 in --sanitize) SAN=1;; *) ARGS+=("$1");; esac; shift; done
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; $NVCC --version | tail -1; git rev-parse --short HEAD 2>/dev/null; } | tee "$OUT/stress-env.txt"
$NVCC $FLAGS test/gpu/stress/wavefront.cu -o build-stress/wavefront & $NVCC $FLAGS test/gpu/stress/stress.cu -o build-stress/stress &
$NVCC $FLAGS test/gpu/stress/host_shapes.cu -o build-stress/host_shapes &
$NVCC $FLAGS -g -Xcompiler -fsanitize=thread -Xlinker -ltsan test/gpu/stress/host_shapes.cu -o build-stress/host_shapes_tsan &
wait
rc=0
run() {  # run <limit s> <env/cmd...>
  local lim=$1; shift
  echo "=== $*"
  timeout -s KILL "$lim" env "$@" 2>&1 | tail -n "${TAILN:-8}"
  local r=${PIPESTATUS[0]}; echo "=== rc=$r"; [ "$r" -ne 0 ] && rc=1
}
host_shapes() {
  # every end of every seed; the run's own checks (exact results, every launch a twin, no fallback) and
  # its exit status; a hang or a crash at exit shows as rc 137 / 134 / 139
  local pass=0 fail=0
  for seed in $(seq 1 "${HOST_SEEDS:-24}"); do for end in free leak running reset; do echo "$seed $end"; done; done |
    xargs -P 8 -n 2 sh -c 'out=$(PTB_STRICT=1 timeout -s KILL 120 build-stress/host_shapes --seed $0 --end $1 2>&1); r=$?;
      [ $r = 0 ] && echo "$out" | grep -q "^PASS" && echo "ok $0 $1" || { echo "FAIL seed $0 end $1 rc=$r"; echo "$out" | tail -5; }' \
    > build-stress/host_shapes.txt
  pass=$(grep -c "^ok" build-stress/host_shapes.txt); fail=$(grep -c "^FAIL" build-stress/host_shapes.txt)
  grep -v "^ok" build-stress/host_shapes.txt; echo "host_shapes: $pass runs passed, $fail failed (seeds 1-${HOST_SEEDS:-24} x 4 ends)"
  [ "$fail" = 0 ] || echo "=== rc=1"
  for seed in 3 7; do
    run 300 PTB_STRICT=1 compute-sanitizer --tool memcheck --error-exitcode 99 --print-limit 10 build-stress/host_shapes --seed $seed --phases 3 --end reset
  done
  # ThreadSanitizer on the host code (the monitor thread, policy changes, launches from several threads);
  # races inside the CUDA driver's own threads are not the runtime's: libcuda is not instrumented
  echo "called_from_lib:libcuda.so" > build-stress/tsan.supp
  echo "ThreadSanitizer build: $(nm build-stress/host_shapes_tsan 2>/dev/null | grep -c ' U __tsan_') __tsan_ calls (0: not instrumented)"
  for seed in 3 5 7; do
    TAILN=40 run 300 PTB_STRICT=1 TSAN_OPTIONS="suppressions=build-stress/tsan.supp halt_on_error=0 exitcode=66" \
      build-stress/host_shapes_tsan --seed $seed --phases 3 --end free
  done
}
if [ "${ONLY:-}" = host_shapes ]; then
  host_shapes 2>&1 | tee "$OUT/stress.txt"
  grep -qE "^=== rc=[1-9]" "$OUT/stress.txt" && exit 1
  exit 0
fi
{
  host_shapes
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
