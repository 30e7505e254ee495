#!/bin/bash
# Builds and runs the runtime's GPU tests and benchmarks on the GPU machine; logs go to $OUT (or ./out).
# Usage: bash test/gpu/runtime/run_on_gpu.sh [target ...]   (default: every target below)
set -u
OUT=${OUT:-out}
mkdir -p "$OUT" build-rt
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
FLAGS="-std=c++17 -arch=sm_90 -O3 -I runtime/include -Xcompiler -Wall,-Wextra"
declare -A SRC=(
  [test_basic]=test/gpu/runtime/test_basic.cu
  [test_dispatch]=test/gpu/runtime/test_dispatch.cu
  [test_policy]=test/gpu/runtime/test_policy.cu
  [test_qos_feedback]=test/gpu/runtime/test_qos_feedback.cu
  [test_request_gate]=test/gpu/runtime/test_request_gate.cu
  [test_policy_subset]=test/gpu/runtime/test_policy_subset.cu
  [test_fallback]=test/gpu/runtime/test_fallback.cu
  [test_controller_link]=test/gpu/runtime/test_controller_link.cu
  [test_short_launches]=test/gpu/runtime/test_short_launches.cu
  [test_early_setup]=test/gpu/runtime/test_early_setup.cu
  [test_link_devices]=test/gpu/runtime/test_link_devices.cu  # two GPUs (SKIP on one)
  [bench_overhead]=bench/runtime/bench_overhead.cu
  [bench_policy]=bench/runtime/bench_policy.cu
  [colocate]=build/examples-transformed/colocate.cu  # test/gpu/examples/transform.sh
)
ORDER="test_basic test_dispatch test_policy test_policy_subset test_fallback test_controller_link test_short_launches test_early_setup test_link_devices test_qos_feedback test_request_gate bench_overhead bench_policy colocate"
TARGETS=${*:-$ORDER}
{
  date -u; hostname; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; $NVCC --version | tail -2
} 2>&1 | tee "$OUT/env.txt"
pids=()
for t in $TARGETS; do
  [ -f "${SRC[$t]}" ] || { echo "skip $t (no source)"; continue; }
  ( $NVCC $FLAGS -o build-rt/$t "${SRC[$t]}" > build-rt/$t.buildlog 2>&1; echo "build $t rc=$?" ) &
  pids+=($!)
done
wait "${pids[@]}"
cat build-rt/*.buildlog > "$OUT/build.txt" 2>/dev/null; cat "$OUT/build.txt"
rc=0
# run_env TEST LABEL [VAR=VALUE ...] [ARGS...]: TEST in $OUT with no PTB_* setting from outside but the VAR=VALUE
# words, then its other words as arguments; logs "=== TEST LABEL rc=N" and sets rc to 1 when N is not 0.
run_env() {
  local test=$1 label=$2 envs=() r
  shift 2
  while [ $# -gt 0 ] && [[ $1 == *=* ]]; do envs+=("$1"); shift; done
  ( cd "$OUT" && timeout -s KILL 60 env -u PTB_MODE -u PTB_SMS -u PTB_BLOCKS_PER_SM -u PTB_QOSD -u PTB_EARLY_SETUP \
      ${envs[@]+"${envs[@]}"} "$OLDPWD/build-rt/$test" "$@" ) 2>&1 | tee -a "$OUT/log.txt"
  r=${PIPESTATUS[0]}; echo "=== $test $label rc=$r" | tee -a "$OUT/log.txt"; [ $r -ne 0 ] && rc=1
  return 0
}
for t in $TARGETS; do
  [ -x build-rt/$t ] || continue
  lim=90; case $t in bench_*) lim=100;; esac
  echo "=== $t" | tee -a "$OUT/log.txt"
  if [ $t = test_fallback ]; then  # one process per reason (some break the context or fill the device)
    for c in invalid_launch context_error too_many_tasks device_setup no_occupancy policy_upload no_control_block \
             fusion_mismatch capture_first; do
      ( cd "$OUT" && timeout -s KILL 60 env -u PTB_MODE -u PTB_SMS -u PTB_BLOCKS_PER_SM -u PTB_STRICT \
          "$OLDPWD/build-rt/$t" --case $c ) 2>&1 | tee -a "$OUT/log.txt"
      r=${PIPESTATUS[0]}; echo "=== $t --case $c rc=$r" | tee -a "$OUT/log.txt"; [ $r -ne 0 ] && rc=1
    done
    # PTB_STRICT=1: the report, then abort (SIGABRT: 134 through the shell)
    ( cd "$OUT" && PTB_STRICT=1 timeout -s KILL 60 "$OLDPWD/build-rt/$t" --case no_occupancy --strict-expected ) \
      > "$OUT/strict.txt" 2>&1
    r=$?; cat "$OUT/strict.txt" | tee -a "$OUT/log.txt"
    if [ $r = 134 ] && grep -q "fallback no_occupancy" "$OUT/strict.txt" && grep -q "PTB_STRICT=1" "$OUT/strict.txt"; then
      echo "=== $t strict rc=$r (aborted after its report, as expected)" | tee -a "$OUT/log.txt"
    else
      echo "=== $t strict rc=$r FAIL (expected 134 after a report)" | tee -a "$OUT/log.txt"; rc=1
    fi
    continue
  fi
  if [ $t = test_early_setup ]; then  # the device set up before the first launch, or not (test_early_setup.cu)
    for e in "PTB_MODE=ptb PTB_EARLY_SETUP=1" "PTB_MODE=ptb" "PTB_EARLY_SETUP=1"; do run_env "$t" "[$e]" $e; done
    continue
  fi
  # test_dispatch checks the default (automatic) launch mode: no PTB_* policy or mode from outside
  clean=(); [ $t = test_dispatch ] && clean=(env -u PTB_MODE -u PTB_SMS -u PTB_BLOCKS_PER_SM)
  ( cd "$OUT" && timeout -s KILL $lim ${clean[@]+"${clean[@]}"} "$OLDPWD/build-rt/$t" ) 2>&1 | tee -a "$OUT/log.txt"
  r=${PIPESTATUS[0]}; echo "=== $t rc=$r" | tee -a "$OUT/log.txt"; [ $r -ne 0 ] && rc=1
  if [ $t = test_policy ]; then  # the process policy from the environment
    run_env "$t" --env PTB_SMS=0-65 PTB_BLOCKS_PER_SM=2 --env
  fi
  if [ $t = test_dispatch ]; then  # the form a launch with no policy runs under each environment
    for e in "PTB_SMS=0-65" "PTB_BLOCKS_PER_SM=2" "PTB_SMS=7 PTB_BLOCKS_PER_SM=1" "PTB_MODE=ptb" "PTB_MODE=original" \
             "PTB_MODE=auto" "PTB_MODE=auto PTB_SMS=66-131"; do
      run_env "$t" "--env [$e]" $e --env
    done
  fi
done
exit $rc
