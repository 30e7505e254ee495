#!/usr/bin/env bash
# ptb-transform by hand: both sources into build-cli/src, then one nvcc command on the outputs.
#   PTB_PREFIX=<ptb-tools install prefix> bash examples/scale-app/cli.sh && PTB_SMS=0-65 examples/scale-app/build-cli/scale_app
set -euo pipefail
cd "$(dirname "$0")"
PTB_PREFIX="${PTB_PREFIX:-/usr/local}"
NVCC="${NVCC:-nvcc}"
BUILD="${BUILD:-build-cli}"
FLAGS=(-Iinclude -DSCALE_BLOCK=256 -std=c++17)
"$PTB_PREFIX/bin/ptb-transform" main.cu scale.cu --output-dir "$BUILD/src" -- "${FLAGS[@]}"
"$NVCC" "${FLAGS[@]}" -arch=sm_90 -I "$PTB_PREFIX/include" "$BUILD/src/main.cu" "$BUILD/src/scale.cu" -o "$BUILD/scale_app"
echo "built $BUILD/scale_app"
