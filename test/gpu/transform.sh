#!/usr/bin/env bash
# Runs on the development machine (clang tool): writes the PTB-transformed copy of every test/gpu/*.cu to
# build/gpu-transformed/<same name> (or $1), for test/gpu/run_on_gpu.sh to compile on the GPU machine.
#
#   bash test/gpu/transform.sh [OUTPUT_DIR]
#
# PTB_TRANSFORM overrides the tool's path (default build/tools/ptb-transform/ptb-transform).
# Extra compiler arguments for the tool's parse can be given in PTB_TRANSFORM_ARGS.
set -eu
cd "$(dirname "$0")/../.."
TOOL="${PTB_TRANSFORM:-build/tools/ptb-transform/ptb-transform}"
OUTDIR="${1:-build/gpu-transformed}"
if [ ! -x "$TOOL" ]; then
  echo "transform.sh: $TOOL not found: build the tool first (cmake --build build)" >&2
  exit 1
fi
mkdir -p "$OUTDIR"
# shellcheck disable=SC2086
"$TOOL" --output-dir "$OUTDIR" test/gpu/*.cu -- -std=c++17 -I test/gpu ${PTB_TRANSFORM_ARGS:-}
n_in=$(ls test/gpu/*.cu | wc -l)
n_out=$(ls "$OUTDIR"/*.cu 2>/dev/null | wc -l)
echo "transform.sh: $n_out of $n_in programs written to $OUTDIR"
[ "$n_out" -eq "$n_in" ] || { echo "transform.sh: some programs were not written" >&2; exit 1; }
echo "carry it to the GPU machine and run: bash test/gpu/run_on_gpu.sh --bench $OUTDIR"
