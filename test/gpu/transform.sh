#!/usr/bin/env bash
# Runs on the development machine (clang tool): writes the PTB-transformed copy of every test/gpu/*.cu to
# build/gpu-transformed/<same name> (or $1), for test/gpu/run_on_gpu.sh to compile on the GPU machine.
#
#   bash test/gpu/transform.sh [OUTPUT_DIR]
#
# It runs `ptb-transform --output-dir DIR test/gpu/*.cu -- -std=c++17 -I test/gpu`. The tool writes nothing
# when any file fails, so on failure the files are transformed one at a time (in parallel) and the ones
# the tool rejects are listed; their transformed build then shows up as NOBUILD on the GPU machine.
# PTB_TRANSFORM overrides the tool's path (default build/tools/ptb-transform/ptb-transform); extra
# compiler arguments for the tool's parse can be given in PTB_TRANSFORM_ARGS.
set -u
cd "$(dirname "$0")/../.."
. test/gpu/lib.sh
TOOL="$(ptb_transform_tool)" || exit 1
OUTDIR="${1:-build/gpu-transformed}"
# run a private copy: the build directory's binary may be relinked while we run
TMPTOOL="$(mktemp -d)/ptb-transform"
cp "$TOOL" "$TMPTOOL" && TOOL="$TMPTOOL"
trap 'rm -rf "$(dirname "$TMPTOOL")"' EXIT
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"
LOGF="$OUTDIR.log"
# shellcheck disable=SC2086
# Twins apart, as ptb-nvcc and ptb_transform_sources build (PTB_TWINS_APART=0: together, in one module).
TWINS=--twins-apart; [ "${PTB_TWINS_APART:-1}" = 0 ] && TWINS=
export TWINS
# shellcheck disable=SC2086
if "$TOOL" $TWINS --output-dir "$OUTDIR" test/gpu/*.cu -- -std=c++17 -I test/gpu ${PTB_TRANSFORM_ARGS:-} >"$LOGF" 2>&1; then
  status=0
else
  echo "transform.sh: the tool failed on the whole set; transforming one file at a time" >&2
  export TOOL OUTDIR PTB_TRANSFORM_ARGS="${PTB_TRANSFORM_ARGS:-}"
  ls test/gpu/*.cu | xargs -P "$(nproc)" -I{} bash -c \
    '"$TOOL" $TWINS --output-dir "$OUTDIR" "{}" -- -std=c++17 -I test/gpu $PTB_TRANSFORM_ARGS >"$OUTDIR/.$(basename {}).log" 2>&1 || true'
  cat "$OUTDIR"/.*.log >"$LOGF" 2>/dev/null
  rm -f "$OUTDIR"/.*.log
  for f in test/gpu/*.cu; do  # one more try, one at a time, for any file not written
    [ -f "$OUTDIR/$(basename "$f")" ] && continue
    # shellcheck disable=SC2086
    "$TOOL" $TWINS --output-dir "$OUTDIR" "$f" -- -std=c++17 -I test/gpu ${PTB_TRANSFORM_ARGS:-} >>"$LOGF" 2>&1 || true
  done
  status=1
fi
grep -E "(warning|error):" "$LOGF" | grep -v "^\[" || true
n_in=$(ls test/gpu/*.cu | wc -l)
n_out=$(ls "$OUTDIR"/*.cu 2>/dev/null | grep -vc '\.twins\.cu$')
echo "transform.sh: $n_out of $n_in programs written to $OUTDIR (tool output: $LOGF)"
for f in test/gpu/*.cu; do
  [ -f "$OUTDIR/$(basename "$f")" ] || echo "  not transformed: $(basename "$f")"
done
echo "carry it to the GPU machine and run: bash test/gpu/run_on_gpu.sh --bench $OUTDIR"
[ "$n_out" -eq "$n_in" ] && [ $status = 0 ]
