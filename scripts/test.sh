#!/usr/bin/env bash
# Runs the whole test suite: builds (installing what is missing), then the unit tests and the lit tests
# (which also compile the transformed outputs with nvcc when CUDA is installed), all through ctest.
# The fusion compile check runs CI's representative tier; every ratio of every pair:
#   cmake -B build -DPTB_EXHAUSTIVE_CHECKS=ON && ctest --test-dir build   (test/CMakeLists.txt says what differs)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --build-only
ctest --test-dir build --output-on-failure -j "$(nproc)"
