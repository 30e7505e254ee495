#!/usr/bin/env bash
# On the development machine (it has the clang tool; the GPU machine has not): makes the BE programs PTB.
# Writes the ptb-transform --strict output of bench/colocate/be_programs.cu (the only transformed source:
# the LS client and the driver stay plain CUDA) to build/bench-colocate/ (or $1), with SOURCE.txt (commit,
# tool, date) and SOURCES.sha256 (the benchmark's sources: run_on_gpu.sh refuses outputs of others).
#
#   PTB_TRANSFORM=/path/to/ptb-transform bash bench/colocate/transform.sh [OUTPUT_DIR]
#
# PTB_TRANSFORM defaults to build/tools/ptb-transform/ptb-transform, FUSE_KERNELS to the fuse-kernels
# beside it. Also writes be_pair.fused.cu and be_pair_memory.fused.cu (fuse-kernels on be_kernels.cuh: the pairs'
# fused kernels).
# Exit status 0 only when everything is written.
set -u
cd "$(dirname "$0")/../.."
. test/gpu/lib.sh
TOOL="$(ptb_transform_tool)" || exit 1
OUTDIR="${1:-build/bench-colocate}"
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"
LOGF="$OUTDIR/transform.log"
status=0
"$TOOL" --strict --output-dir "$OUTDIR" bench/colocate/be_programs.cu -- -std=c++17 -I bench/colocate -I runtime/include \
  >"$LOGF" 2>&1 || status=1
[ -f "$OUTDIR/be_programs.cu" ] || { echo "  not transformed: be_programs.cu"; status=1; }
# The pair's fused kernels (the Tacker manager's BE, be_pair.cu includes them): be_wmma + be_compute of
# be_kernels.cuh at four ratios; the benchmark times each at start-up and keeps the fastest.
FUSE="${FUSE_KERNELS:-$(dirname "$TOOL")/../fuse-kernels/fuse-kernels}"
# The pair-memory BE's (be_pair_memory.cu): be_wmma + be_triad at the same four ratios and 3:1.
cat >"$OUTDIR/be_pair.json" <<JSON
{"fusions": [{"kernels": [{"name": "be_wmma", "block": "128"}, {"name": "be_compute", "block": "256"}],
              "ratios": ["1:1", "2:1", "1:2", "2:2"], "name": "be_pair", "output": "$OUTDIR/be_pair.fused.cu"},
             {"kernels": [{"name": "be_wmma", "block": "128"}, {"name": "be_triad", "block": "256"}],
              "ratios": ["1:1", "2:1", "1:2", "2:2", "3:1"], "name": "be_pair_memory",
              "output": "$OUTDIR/be_pair_memory.fused.cu"}]}
JSON
"$FUSE" --config "$OUTDIR/be_pair.json" bench/colocate/be_kernels.cuh -- -std=c++17 -Wno-pragma-once-outside-header \
  >>"$LOGF" 2>&1 || status=1
cat "$LOGF"
for f in be_pair.fused.cu be_pair_memory.fused.cu; do
  [ -f "$OUTDIR/$f" ] || { echo "  not fused: $f"; status=1; }
done
{
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$([ -n "$(git status --porcelain -- bench/colocate runtime/include 2>/dev/null)" ] && echo ' (bench/colocate or runtime/include differ from it)')"
  echo "tool: $TOOL ($("$TOOL" --version 2>&1 | head -1))"
  echo "transformed: $(date -u '+%F %T') UTC"
} >"$OUTDIR/SOURCE.txt"
sha256sum bench/colocate/*.cu bench/colocate/*.cuh bench/colocate/*.h >"$OUTDIR/SOURCES.sha256"
cat "$OUTDIR/SOURCE.txt"
if [ $status = 0 ]; then
  echo "transform.sh: carry $OUTDIR to the GPU machine and run: bash bench/colocate/run_on_gpu.sh"
else
  echo "transform.sh: FAILED (see $LOGF); nothing usable in $OUTDIR" >&2
fi
exit $status
