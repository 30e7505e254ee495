#!/usr/bin/env bash
# Runs fuse-kernels with test/fusion/semantics/fusions.json on test/fusion/semantics/kernels.cu into
# build/fusion-semantics/ (or OUTPUT_DIR): one <name>.cu per fusion, and fusions.list (one line per fusion:
# name output kernel...) for test/fusion/semantics/run_on_gpu.sh. Stops at the first error.
#   bash test/fusion/semantics/transform.sh [OUTPUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../../.."
ROOT="$PWD"
HERE="$ROOT/test/fusion/semantics"
TOOL="${FUSE_KERNELS:-build/tools/fuse-kernels/fuse-kernels}"
case "$TOOL" in /*) ;; *) TOOL="$ROOT/$TOOL" ;; esac
OUTDIR="${1:-build/fusion-semantics}"
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"
# The tool writes each "output" relative to its working directory: run it in the output directory.
(cd "$OUTDIR" && "$TOOL" --config "$HERE/fusions.json" "$HERE/kernels.cu" 2>fuse-kernels.log) ||
  { cat "$OUTDIR/fuse-kernels.log"; exit 1; }
cat "$OUTDIR/fuse-kernels.log"
python3 - "$HERE/fusions.json" >"$OUTDIR/fusions.list" <<'PY'
import json, sys
for f in json.load(open(sys.argv[1]))["fusions"]:
    print(f["name"], f["output"], *[k["name"] for k in f["kernels"]])
PY
while read -r name output kernels; do
  [ -s "$OUTDIR/$output" ] || { echo "error: $OUTDIR/$output was not written"; exit 1; }
  echo "$name ($kernels) -> $OUTDIR/$output"
done <"$OUTDIR/fusions.list"
