#!/usr/bin/env bash
# Writes what both tools generate from every corpus of the repository into DIR, so that a refactoring can
# show its outputs are byte-identical: run it before and after, then `diff -r BEFORE AFTER`.
#
#   bash scripts/snapshot-outputs.sh DIR [BUILD_DIR]
#
# Corpora: the GPU corpus (test/gpu, ptb-transform), the bench programs, examples/saxpy.cu, the fusion
# pairs (test/fusion/pairs.txt) and the semantics fusions (test/fusion/semantics), and the GPU corpus's
# inventory (text and JSON). Each tool's output
# files and its messages (stderr) are kept; paths inside messages and outputs are made relative to the
# repository (so that two checkouts of one commit give the same snapshot).
# The lit tests check their own outputs (FileCheck) and are not repeated here.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
[ $# -ge 1 ] || { sed -n '2,13p' "$0"; exit 2; }
DIR="$1"; BUILD="${2:-build}"
case "$DIR" in /*) ;; *) DIR="$ROOT/$DIR" ;; esac
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
PTB="$BUILD/tools/ptb-transform/ptb-transform"
FUSE="$BUILD/tools/fuse-kernels/fuse-kernels"
for t in "$PTB" "$FUSE"; do [ -x "$t" ] || { echo "snapshot-outputs: $t not built" >&2; exit 1; }; done
rm -rf "$DIR"; mkdir -p "$DIR"
clean() { sed -e "s|$ROOT/||g" -e "s|$DIR/||g"; }

"$PTB" --output-dir "$DIR/gpu" test/gpu/*.cu -- -std=c++17 -I test/gpu 2>&1 | clean > "$DIR/gpu.log" || true
"$PTB" --list-kernels --format json test/gpu/*.cu -- -std=c++17 -I test/gpu 2>&1 | clean > "$DIR/gpu-inventory.json" || true
"$PTB" --list-kernels test/gpu/*.cu -- -std=c++17 -I test/gpu 2>&1 | clean > "$DIR/gpu-inventory.txt" || true
"$PTB" --output-dir "$DIR/programs" bench/programs/*.cu -- -std=c++17 -I bench/programs 2>&1 | clean > "$DIR/programs.log" || true
"$PTB" -o "$DIR/saxpy.ptb.cu" examples/saxpy.cu -- -std=c++17 2>&1 | clean > "$DIR/saxpy.log" || true
FUSE_KERNELS="$FUSE" bash test/fusion/transform.sh "$DIR/fusion-pairs" 2>&1 | clean > "$DIR/fusion-pairs.log" || true
FUSE_KERNELS="$FUSE" bash test/fusion/semantics/transform.sh "$DIR/fusion-semantics" 2>&1 | clean > "$DIR/fusion-semantics.log" || true
# The outputs name the sources by absolute path too (#line directives, #includes pointed back at them), and
# the repository's root differs between checkouts: every file is cleaned like the messages.
find "$DIR" -type f | while IFS= read -r f; do clean < "$f" > "$f.tmp"; mv "$f.tmp" "$f"; done
echo "snapshot-outputs: $(find "$DIR" -type f | wc -l) files in $DIR"
