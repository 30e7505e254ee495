#!/usr/bin/env bash
# One GPU-machine session for fusion: the corpus against the CPU, then every pair's bit-identity checks
# and (with --bench) the timing of every ratio. Run from the repository root on the GPU machine with
# build/fusion-generated carried (test/fusion/transform.sh makes it). Prints everything; exit 0 iff all pass.
set -uo pipefail
cd "$(dirname "$0")/../.."
NVCC=nvcc; command -v nvcc >/dev/null || NVCC=/usr/local/cuda/bin/nvcc
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) $($NVCC --version | tail -1)"
rc=0
"$NVCC" -arch=sm_90 -std=c++17 -O3 -I test/fusion/corpus test/fusion/corpus/selfcheck.cu -o build/fusion-selfcheck || rc=1
echo "== corpus vs CPU (scale ${SELFCHECK_SCALE:-1})"
./build/fusion-selfcheck --scale "${SELFCHECK_SCALE:-1}" || rc=1
echo "== fused pairs"
bash test/fusion/run_on_gpu.sh "$@" || rc=1
exit $rc
