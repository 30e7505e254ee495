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
"$BUILD/tools/ptb-transform/ptb-transform" --output-dir "$OUT/src" test/gpu/*.cu -- -std=c++17 -I test/gpu 2>"$OUT/transform.log" ||
  { cat "$OUT/transform.log"; echo "compile_check: ptb-transform failed"; exit 1; }
export NVCC OUT
ls "$OUT"/src/*.cu | xargs -P "$(nproc)" -I{} sh -c \
  '"$NVCC" -std=c++17 -O2 -arch=sm_90 -I runtime/include -I test/gpu -Werror all-warnings -c {} -o "$OUT/$(basename {}).o" > "$OUT/$(basename {}).log" 2>&1 || { cat "$OUT/$(basename {}).log"; echo "FAIL {}"; exit 255; }'
n=$(ls "$OUT"/*.o | wc -l)
echo "compile_check: $n transformed programs compiled with nvcc"
