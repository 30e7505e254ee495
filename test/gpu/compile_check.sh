#!/usr/bin/env bash
# No GPU needed (CI): transform every test/gpu program with the built tool and compile each transformed
# output with nvcc for sm_90, warnings as errors. The GPU machine runs them (run_on_gpu.sh).
#   bash test/gpu/compile_check.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD="${1:-build}"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
OUT="$BUILD/gpu-compile-check"
rm -rf "$OUT" && mkdir -p "$OUT"
"$BUILD/tools/ptb-transform/ptb-transform" --twins-apart --output-dir "$OUT/src" test/gpu/*.cu -- -std=c++17 -I test/gpu 2>"$OUT/transform.log" ||
  { cat "$OUT/transform.log"; echo "compile_check: ptb-transform failed"; exit 1; }
# Each program as ptb-nvcc and ptb_transform_sources build it (docs/generated-code.md, "Twins apart"): the
# main output and its twins part, compiled apart and linked into one program (a host definition made by
# both would not link). Host code at -O0: this check is that the code compiles and links (the GPU scripts
# build at -O2 and run it); nvcc's -O is the host compiler's level, the device code is still optimised by
# ptxas as at -O2, and the host optimiser was about a sixth of the check's CPU time (docs/results/ci-time.md).
export NVCC OUT
ls "$OUT"/src/*.cu | grep -v '\.twins\.cu$' | xargs -P "$(nproc)" -I{} sh -c '
  f={}; b=$(basename "$f" .cu); t="$OUT/src/$b.twins.cu"; log="$OUT/$b.log"
  flags="-std=c++17 -O0 -arch=sm_90 -I runtime/include -I test/gpu -Werror all-warnings"
  { "$NVCC" $flags -c "$f" -o "$OUT/$b.o" && "$NVCC" $flags -c "$t" -o "$OUT/$b.twins.o" &&
    "$NVCC" -arch=sm_90 "$OUT/$b.o" "$OUT/$b.twins.o" -o "$OUT/$b"; } > "$log" 2>&1 ||
    { cat "$log"; echo "FAIL $f"; exit 255; }'
n=$(ls "$OUT"/*.twins.o | wc -l)
apart=$(grep -l "^#define PTB_TWINS_PART" "$OUT"/src/*.twins.cu | wc -l)
echo "compile_check: $n transformed programs compiled with nvcc and linked with their twins parts ($apart with twins apart)"
grep -h "remark: .*no twins apart" "$OUT/transform.log" | sed 's/:[0-9]*:[0-9]*: remark: .*no twins apart)*: /: /; s/.*\///' || true
