#!/usr/bin/env bash
# Sets up everything on a fresh Debian 12 machine and runs ptb-transform on the bundled example:
# installs the Debian packages that are missing (only those), configures and builds with CMake.
#   scripts/setup.sh              set up, build, transform examples/saxpy.cu
#   scripts/setup.sh --build-only set up and build (what scripts/test.sh uses)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(clang-19 libclang-19-dev llvm-19-dev llvm-19-tools libfmt-dev libcli11-dev libgtest-dev
          clang-format-19 clang-tidy-19 cmake ninja-build g++ python3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing missing Debian packages: ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null && [ -z "${CUDA_PATH:-}" ]; then
  echo "setup: warning: no CUDA toolkit found (CUDA_PATH, nvcc on PATH, /usr/local/cuda); ptb-transform needs" \
       "its headers, and the nvcc tests will be skipped" >&2
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPTB_WERROR=ON >/dev/null
cmake --build build

if [ "${1:-}" = "--build-only" ]; then exit 0; fi

mkdir -p build/examples
./build/tools/ptb-transform/ptb-transform --list-kernels examples/saxpy.cu
./build/tools/ptb-transform/ptb-transform examples/saxpy.cu -o build/examples/saxpy.ptb.cu
echo "setup: wrote build/examples/saxpy.ptb.cu (compile it with: nvcc -std=c++17 -arch=sm_90 -I runtime/include build/examples/saxpy.ptb.cu)"
