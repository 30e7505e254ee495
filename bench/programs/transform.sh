#!/usr/bin/env bash
# On the development machine (it has the clang tool; the GPU machine has not): writes the ptb-transform
# output of every bench/programs/*.cu to build/bench-programs/<same name> (or $1), with SOURCE.txt (the
# commit and state of the tree, the tool and its version, the date) and SOURCES.sha256 (the sources'
# checksums: run_on_gpu.sh refuses outputs of other sources), for bench/programs/run_on_gpu.sh to
# compile on the GPU machine.
#
#   PTB_TRANSFORM=/path/to/ptb-transform bash bench/programs/transform.sh [OUTPUT_DIR]
#
# PTB_TRANSFORM defaults to build/tools/ptb-transform/ptb-transform. The tool runs with --strict: a
# kernel or launch it cannot rewrite is an error here (the benchmark compares whole programs in which
# every kernel is transformed). Exit status 0 only when every program was written.
set -u
cd "$(dirname "$0")/../.."
. test/gpu/lib.sh
TOOL="$(ptb_transform_tool)" || exit 1
OUTDIR="${1:-build/bench-programs}"
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"
LOGF="$OUTDIR/transform.log"
status=0
# Twins apart, as ptb-nvcc and ptb_transform_sources build (PTB_TWINS_APART=0: together, in one module).
TWINS=(--twins-apart); [ "${PTB_TWINS_APART:-1}" = 0 ] && TWINS=()
"$TOOL" --strict ${TWINS[@]+"${TWINS[@]}"} --output-dir "$OUTDIR" bench/programs/*.cu -- -std=c++17 -I bench/programs >"$LOGF" 2>&1 || status=1
cat "$LOGF"
n_in=$(ls bench/programs/*.cu | wc -l)
n_out=$(ls "$OUTDIR"/*.cu 2>/dev/null | grep -vc '\.twins\.cu$')
for f in bench/programs/*.cu; do
  [ -f "$OUTDIR/$(basename "$f")" ] || { echo "  not transformed: $(basename "$f")"; status=1; }
done
{
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$([ -n "$(git status --porcelain -- bench/programs runtime/include 2>/dev/null)" ] && echo ' (bench/programs or runtime/include differ from it)')"
  echo "tool: $TOOL ($("$TOOL" --version 2>&1 | head -1))"
  echo "transformed: $(date -u '+%F %T') UTC, $n_out of $n_in programs, twins $([ ${#TWINS[@]} = 0 ] && echo together || echo apart)"
} >"$OUTDIR/SOURCE.txt"
# the sources these outputs come from: run_on_gpu.sh refuses outputs of other sources
sha256sum bench/programs/*.cu bench/programs/*.cuh >"$OUTDIR/SOURCES.sha256"
cat "$OUTDIR/SOURCE.txt"
if [ $status = 0 ]; then
  echo "transform.sh: carry $OUTDIR to the GPU machine and run: bash bench/programs/run_on_gpu.sh"
else
  echo "transform.sh: FAILED (see $LOGF); nothing usable in $OUTDIR" >&2
fi
exit $status
