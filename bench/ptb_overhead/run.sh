#!/usr/bin/env bash
# PTB overhead table: runs the --bench of every GPU test program in its transformed build, which times the
# same launch code in the runtime's `original` and `ptb` launch modes, interleaved (3 warm-ups, then 25
# repeats of each, cudaEvent timing, medians), and prints
#
#   program  orig ms  ptb ms  ratio        (ratio = ptb / original; < 1 means the PTB twin is faster)
#   geometric mean of N ratios: ...; worst: ... (program)
#
# Run it on the GPU machine from the repository root, with the transformed sources carried along:
#
#   bash bench/ptb_overhead/run.sh [--only REGEX] [TRANSFORMED_DIR]      (default build/gpu-transformed)
#
# It reuses test/gpu/run_on_gpu.sh's builds (build/gpu-bin/, rebuilt only when a source is newer), so
# after `bash test/gpu/run_on_gpu.sh` it only runs the benchmarks. Logs: $OUT or build/gpu-logs/.
set -u
cd "$(dirname "$0")/../.."
exec bash test/gpu/run_on_gpu.sh --bench-only "$@"
