#!/usr/bin/env bash
# ptb-transform by hand: the four sources into build-cli/src (the transformed headers beside them), then
# one nvcc command on the outputs (separable compilation: -rdc=true).
#   PTB_PREFIX=<ptb-tools install prefix> bash examples/multi-file/cli.sh && PTB_SMS=0-65 examples/multi-file/build-cli/multi_file
set -euo pipefail
cd "$(dirname "$0")"
PTB_PREFIX="${PTB_PREFIX:-/usr/local}"
NVCC="${NVCC:-nvcc}"
BUILD="${BUILD:-build-cli}"
FLAGS=(-I. -DBLOCK=256 -std=c++17 --expt-relaxed-constexpr)
SOURCES=(src/main.cu src/scale.cu src/sum.cu helpers/fill.cu)
"$PTB_PREFIX/bin/ptb-transform" "${SOURCES[@]}" --output-dir "$BUILD/src" -- "${FLAGS[@]}"
OUTPUTS=()  # --output-dir writes each output under its file name
for s in "${SOURCES[@]}"; do OUTPUTS+=("$BUILD/src/${s##*/}"); done
"$NVCC" "${FLAGS[@]}" -arch=sm_90 -rdc=true -I "$PTB_PREFIX/include" "${OUTPUTS[@]}" -o "$BUILD/multi_file"
echo "built $BUILD/multi_file"
