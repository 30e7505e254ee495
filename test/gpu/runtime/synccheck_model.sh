#!/bin/bash
# On the GPU machine: builds test/gpu/runtime/synccheck_model.cu and runs each case plainly and under
# compute-sanitizer's synccheck; prints one line per case (its own check, then synccheck's error count).
set -u
cd "$(dirname "$0")/../../.."
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
SAN=${SAN:-/usr/local/cuda/bin/compute-sanitizer}
mkdir -p build-rt
$NVCC -std=c++17 -arch=sm_90 -O3 -lineinfo -I runtime/include -o build-rt/synccheck_model test/gpu/runtime/synccheck_model.cu || exit 1
/usr/local/cuda/bin/cuobjdump -sass build-rt/synccheck_model | grep -c "CALL" | sed "s/^/CALL instructions in the SASS (the call sites): /"
for c in one-site warp-sites lane-sites park; do
  plain=$(timeout 60 build-rt/synccheck_model $c | head -1)
  san=$(timeout 120 $SAN --tool synccheck --print-limit 1 build-rt/synccheck_model $c 2>&1)
  echo "$plain | synccheck: $(echo "$san" | grep -m1 -oE 'ERROR SUMMARY: [0-9]+ error' ) $(echo "$san" | grep -m1 -oE 'Barrier error detected\. [^.]*\.')"
done
