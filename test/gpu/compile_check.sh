#!/usr/bin/env bash
# No GPU needed (CI): transform every test/gpu program with the built tool and compile each transformed
# output with nvcc for sm_90, warnings as errors. The GPU machine runs them (run_on_gpu.sh).
#   bash test/gpu/compile_check.sh [--subset] [BUILD_DIR]
# --subset (CI's tier, PTB_EXHAUSTIVE_CHECKS=OFF): every program is still transformed (the tool must
# succeed on all of them), but only the programs that test/gpu/ci_subset.py picks are compiled and linked:
# a cover of every feature the corpus exercises, read from the tool's inventory (--list-kernels), its report
# and the runtime names and generated forms in its outputs (the script says how). Without it, every program.
set -euo pipefail
cd "$(dirname "$0")/../.."
SUBSET=0
if [ "${1:-}" = --subset ]; then SUBSET=1; shift; fi
BUILD="${1:-build}"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
OUT="$BUILD/gpu-compile-check"
rm -rf "$OUT" && mkdir -p "$OUT"
# The inventory (--subset), beside the transform: both are one process each.
if [ "$SUBSET" = 1 ]; then
  "$BUILD/tools/ptb-transform/ptb-transform" --list-kernels --format=json test/gpu/*.cu -- -std=c++17 -I test/gpu \
    > "$OUT/inventory.json" 2>"$OUT/inventory.log" &
  inventory=$!
fi
"$BUILD/tools/ptb-transform/ptb-transform" --twins-apart --output-dir "$OUT/src" test/gpu/*.cu -- -std=c++17 -I test/gpu 2>"$OUT/transform.log" ||
  { cat "$OUT/transform.log"; echo "compile_check: ptb-transform failed"; exit 1; }
# Each program as ptb-nvcc and ptb_transform_sources build it (docs/generated-code.md, "Twins apart"): the
# main output and its twins part, compiled apart and linked into one program (a host definition made by
# both would not link). Host code at -O0: this check is that the code compiles and links (the GPU scripts
# build at -O2 and run it); nvcc's -O is the host compiler's level, the device code is still optimised by
# ptxas as at -O2, and the host optimiser was about a sixth of the check's CPU time (docs/results/ci-time.md).
ls "$OUT"/src/*.cu | grep -v '\.twins\.cu$' > "$OUT/programs.txt"
if [ "$SUBSET" = 1 ]; then
  wait "$inventory" || { cat "$OUT/inventory.log"; echo "compile_check: the inventory failed"; exit 1; }
  python3 test/gpu/ci_subset.py "$OUT/inventory.json" "$OUT/transform.log" "$OUT/src" > "$OUT/picked.txt" 2>"$OUT/subset.log" ||
    { cat "$OUT/subset.log"; echo "compile_check: ci_subset.py failed"; exit 1; }
  cat "$OUT/subset.log"
  [ -s "$OUT/picked.txt" ] || { echo "compile_check: no program picked"; exit 1; }
  sed "s|^|$OUT/src/|; s|\$|.cu|" "$OUT/picked.txt" > "$OUT/programs.txt"
  for f in $(cat "$OUT/programs.txt"); do [ -f "$f" ] || { echo "compile_check: picked $f, which was not written"; exit 1; }; done
fi
export NVCC OUT
xargs -P "$(nproc)" -I{} sh -c '
  f={}; b=$(basename "$f" .cu); t="$OUT/src/$b.twins.cu"; log="$OUT/$b.log"
  flags="-std=c++17 -O0 -arch=sm_90 -I runtime/include -I test/gpu -Werror all-warnings"
  { "$NVCC" $flags -c "$f" -o "$OUT/$b.o" && "$NVCC" $flags -c "$t" -o "$OUT/$b.twins.o" &&
    "$NVCC" -arch=sm_90 "$OUT/$b.o" "$OUT/$b.twins.o" -o "$OUT/$b"; } > "$log" 2>&1 ||
    { cat "$log"; echo "FAIL $f"; exit 255; }' < "$OUT/programs.txt"
n=$(ls "$OUT"/*.twins.o | wc -l)
[ "$n" = "$(wc -l < "$OUT/programs.txt")" ] || { echo "compile_check: $n programs built, $(wc -l < "$OUT/programs.txt") expected"; exit 1; }
apart=$(grep -l "^#define PTB_TWINS_PART" "$OUT"/src/*.twins.cu | wc -l)
transformed=$(ls "$OUT"/src/*.twins.cu | wc -l)
echo "compile_check: $n transformed programs compiled with nvcc and linked with their twins parts, of $transformed transformed ($apart with twins apart)"
grep -h "remark: .*no twins apart" "$OUT/transform.log" | sed 's/:[0-9]*:[0-9]*: remark: .*no twins apart)*: /: /; s/.*\///' || true
