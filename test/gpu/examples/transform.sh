#!/usr/bin/env bash
# Runs on the development machine (clang tool): transforms the bundled examples the way a user would,
# into build/examples-transformed (or $1), for test/gpu/examples/run_on_gpu.sh on the GPU machine.
#   scale-app/   examples/scale-app/main.cu and scale.cu, with the app's own flags (-Iinclude -DSCALE_BLOCK=256)
#   saxpy.cu     examples/saxpy.cu (the README's example)
#   colocate.cu  examples/colocate/colocate.cu, its kernel `be` only (as its CMakeLists.txt asks)
# The outputs point their quoted includes back at examples/ by relative path, so the copy of the
# working tree on the GPU machine finds them.
set -euo pipefail
cd "$(dirname "$0")/../../.."
. test/gpu/lib.sh
TOOL="$(ptb_transform_tool)"
TOOL="$(realpath "$TOOL")"
OUTDIR="$(realpath -m "${1:-build/examples-transformed}")"
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"
(cd examples/scale-app &&
  "$TOOL" main.cu scale.cu --output-dir "$OUTDIR/scale-app" -- -Iinclude -DSCALE_BLOCK=256 -std=c++17)
"$TOOL" examples/saxpy.cu -o "$OUTDIR/saxpy.cu" -- -std=c++17
"$TOOL" --strict --kernels='^be$' examples/colocate/colocate.cu -o "$OUTDIR/colocate.cu" -- -std=c++17 -I runtime/include
echo "transform.sh: examples written to $OUTDIR"
