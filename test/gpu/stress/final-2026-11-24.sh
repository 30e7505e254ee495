#!/bin/bash
# The closing runs of docs/runtime.md, "Resume workers behind a user's kernel" (H100, 2026-11-24), at the
# runtime that asks for 32 hardware queues and launches resume workers outside its lock: the transformed
# corpus (both forms, then confined to five policies), compute-sanitizer (memcheck, racecheck, synccheck)
# on the stress test, the wavefront and the corpus's multi-stream and graph programs, confined; the first-
# launch and per-launch programs of bench/programs with the runtime's 32 queues and with the user's 8.
# Needs build/gpu-transformed (test/gpu/transform.sh) and build/bench-programs. Outputs in $OUT (all.tgz,
# written again after each part).
set -u
O=${OUT:-out}; mkdir -p "$O/corpus" "$O/programs-32" "$O/programs-8"
pack() { (cd "$O" && tar czf /tmp/all.tgz --exclude all.tgz . && mv /tmp/all.tgz all.tgz); }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$O/when.txt"
OUT=$O/corpus timeout -s KILL 240 bash test/gpu/run_on_gpu.sh build/gpu-transformed > "$O/corpus.txt" 2>&1; echo "corpus rc=$? $(date -u +%T)" >> "$O/when.txt"; pack
OUT=$O timeout -s KILL 150 bash test/gpu/stress/confine_and_sanitize.sh --confine-only --jobs 8 > "$O/confined.txt" 2>&1; echo "confined rc=$? $(date -u +%T)" >> "$O/when.txt"
mv "$O/confine-sanitize.txt" "$O/confined-runs.txt" 2>/dev/null; pack
SAN_PROGRAMS="stress|wavefront|multi_stream_concurrent|launch_shapes_streams|graph_capture" SAN_TIMEOUT=100 OUT=$O \
  timeout -s KILL 170 bash test/gpu/stress/confine_and_sanitize.sh --sanitize-only --jobs 8 > "$O/sanitize.txt" 2>&1; echo "sanitize rc=$? $(date -u +%T)" >> "$O/when.txt"; pack
BUDGET_S=50 OUT=$O/programs-32 timeout -s KILL 90 bash bench/programs/run_on_gpu.sh --reps 5 --only 'sobel_once|stencil2d_chain' build/bench-programs > /dev/null 2>&1
CUDA_DEVICE_MAX_CONNECTIONS=8 BUDGET_S=50 OUT=$O/programs-8 timeout -s KILL 90 bash bench/programs/run_on_gpu.sh --reps 5 --only 'sobel_once|stencil2d_chain' build/bench-programs > /dev/null 2>&1
echo "programs $(date -u +%T)" >> "$O/when.txt"; pack
