#!/bin/bash
# The second part of the runs behind docs/runtime.md, "Launches under one policy run in turn" (H100,
# 2026-11-24): a replay of the stress case that failed, the transformed corpus (both forms, then confined to
# five policies), and compute-sanitizer on the stress test, the wavefront and the corpus's multi-stream
# programs, confined. Needs build/gpu-transformed (test/gpu/transform.sh). Outputs in $OUT (all.tgz).
set -u
O=${OUT:-out}; mkdir -p "$O" build-stress
N=${NVCC:-/usr/local/cuda/bin/nvcc}
date -u > "$O/when.txt"
$N -std=c++17 -arch=sm_90 -O2 -lineinfo -I runtime/include test/gpu/stress/stress.cu -o build-stress/stress &
$N -std=c++17 -arch=sm_90 -O2 -lineinfo -I runtime/include test/gpu/stress/wavefront.cu -o build-stress/wavefront &
wait
for r in 1 2 3; do timeout -s KILL 60 build-stress/stress --seed 10523739377958258358 --cases 1 --min-launches 1 | grep -E "^FAIL|^case" | cut -c1-600; done > "$O/replay.txt" 2>&1
OUT=$O/corpus timeout -s KILL 300 bash test/gpu/run_on_gpu.sh build/gpu-transformed > "$O/corpus.txt" 2>&1; echo "corpus rc=$?" >> "$O/when.txt"
OUT=$O timeout -s KILL 200 bash test/gpu/stress/confine_and_sanitize.sh --confine-only --jobs 8 > "$O/confined.txt" 2>&1; echo "confined rc=$?" >> "$O/when.txt"
mv "$O/confine-sanitize.txt" "$O/confined-runs.txt" 2>/dev/null
SAN_PROGRAMS="stress|wavefront|multi_stream_concurrent|launch_shapes_streams|graph_capture" SAN_TIMEOUT=150 OUT=$O \
  timeout -s KILL 200 bash test/gpu/stress/confine_and_sanitize.sh --sanitize-only --jobs 8 > "$O/sanitize.txt" 2>&1; echo "sanitize rc=$?" >> "$O/when.txt"
date -u >> "$O/when.txt"
(cd "$O" && tar czf all.tgz --exclude all.tgz . )
