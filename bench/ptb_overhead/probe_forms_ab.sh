#!/usr/bin/env bash
# One GPU call: the loop-form probe (probe_forms.cu) with this tree's runtime (A, runtime/include) and, if
# carried, another runtime (B, .device-carry/old/ptb: e.g. `git show 2bdd3fd:runtime/include/ptb/...`), then
# the runtime's GPU tests and the yield-latency benchmark with A. Run from the repository root on the GPU
# machine. (At d4e8dc9: run once with A = the in-run-check attempt of
# patches/inrun-checks-2bdd3fd.diff (deleted; last in d4e8dc9), B = 2bdd3fd; once more with A = the committed runtime.)
# Usage: bash bench/ptb_overhead/probe_forms_ab.sh   (outputs under $OUT, or ./out)
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT" build-s3
NVCC=nvcc; command -v nvcc >/dev/null || NVCC=/usr/local/cuda/bin/nvcc
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader) $($NVCC --version | tail -1)"
F="-O2 -arch=sm_90 -std=c++17"
$NVCC $F -I runtime/include -o build-s3/probe_A bench/ptb_overhead/probe_forms.cu &
[ -d .device-carry/old ] && $NVCC $F -I .device-carry/old -o build-s3/probe_B bench/ptb_overhead/probe_forms.cu &
$NVCC -std=c++17 -arch=sm_90 -O3 -I runtime/include -o build-s3/bench_yield bench/runtime/bench_yield.cu &
wait
rc=0
for v in A B; do
  [ -x build-s3/probe_$v ] || continue
  echo "== probe, runtime $v"
  ./build-s3/probe_$v | grep -v regs | sed "s/PROBE /PROBE $v /" | tee -a "$OUT/probe.txt" || rc=1
done
echo "== runtime tests (A)"
bash test/gpu/runtime/run_on_gpu.sh test_basic test_policy > "$OUT/runtime-tests.txt" 2>&1 || rc=1
grep -E "PASS|FAIL|rc=" "$OUT/runtime-tests.txt"
echo "== bench_yield (A)"
timeout -s KILL 120 ./build-s3/bench_yield --reps 8 2>&1 | tee "$OUT/yield.txt" || rc=1
exit $rc
