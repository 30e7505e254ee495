#!/usr/bin/env bash
# GPU call 2 of the 2026-11-22 overhead investigation (repo root, carry build/gpu-transformed-ptbo):
# corpus correctness of the slow programs, their --bench under tunings, the twin without its between-task
# barrier (N), multi_stream_concurrent in one stream (s1), the runtime tests, then Nsight Compute counters
# and SASS sizes (last: the part that may run out of time).
set -u
cd "$(dirname "$0")/../.."
OUT="${OUT:-out}"; mkdir -p "$OUT"
export TDIR=build/gpu-transformed-ptbo
FORCE_NONE=1 VARIANTS="def= cc64k=PTB_CHECK_CYCLES=65536 cc128k=PTB_CHECK_CYCLES=131072 s1=TG_BENCH_STREAMS=1" \
  bash bench/ptb_overhead/sweep.sh --tests 2>&1 | tee "$OUT/run.log" | grep -v "^[ABN] "
( export OUT=/tmp/rtout; bash test/gpu/runtime/run_on_gpu.sh test_basic test_policy > /tmp/rt1.log 2>&1 )
cp /tmp/rtout/log.txt "$OUT/rt-log.txt" 2>/dev/null
grep -E "^=== |^PASS|^FAIL" /tmp/rtout/log.txt | tail -12
bash bench/ptb_overhead/diagnose.sh 2>&1
