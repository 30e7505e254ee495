#!/bin/bash
# The runs behind docs/runtime.md, "Launches under one policy run in turn" (H100, 2026-11-24): the runtime's
# GPU tests, the stress script (wavefront under 8 policies, one stress run), the stress test on the four
# seeds that failed the time bound before (2026-11-23), with the ordering on (and off, PTB_ORDER_STREAMS=0,
# when WITH_OFF is set),
# four fresh seeds, and the pool-growth probe. Outputs in $OUT.
set -u
O=${OUT:-out}; mkdir -p "$O" build-stress
date -u > "$O/when.txt"
N=${NVCC:-/usr/local/cuda/bin/nvcc}
$N -std=c++17 -arch=sm_90 -O2 -I runtime/include bench/runtime/probe_pool_growth.cu -o build-stress/probe_pool_growth &
bash test/gpu/runtime/run_on_gpu.sh test_policy test_basic test_dispatch test_policy_subset > "$O/runtime.txt" 2>&1
echo "runtime tests rc=$?" >> "$O/when.txt"
wait
OUT=$O/stress-script bash test/gpu/stress/run_on_gpu.sh > /dev/null 2>&1; echo "stress script rc=$?" >> "$O/when.txt"
for s in 13151873796227903726 3803700800283139141 10137568575016041117 4477128606541723795; do
  timeout -s KILL 120 build-stress/stress --seed $s > "$O/on-$s.txt" 2>&1; echo "seed $s on rc=$?" >> "$O/when.txt"
  [ -n "${WITH_OFF:-}" ] && { PTB_ORDER_STREAMS=0 timeout -s KILL 120 build-stress/stress --seed $s > "$O/off-$s.txt" 2>&1; echo "seed $s off rc=$?" >> "$O/when.txt"; }
done
for i in 1 2 3 4; do timeout -s KILL 120 build-stress/stress > "$O/fresh$i.txt" 2>&1; echo "fresh$i rc=$?" >> "$O/when.txt"; done
build-stress/probe_pool_growth > "$O/probe_pool_growth.txt" 2>&1
date -u >> "$O/when.txt"
(cd "$O" && tar czf /tmp/all.tgz . && mv /tmp/all.tgz all.tgz)
