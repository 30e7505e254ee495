#!/usr/bin/env bash
# No GPU needed (CI): installs the build into a fresh prefix with `cmake --install`, then builds
# examples/scale-app (a copy, in a temporary directory) every way, with the installed files only:
#  - CMake: find_package(PtbTools CONFIG) and ptb_transform_sources(); the objects hold the twins (their
#    host stubs), a local header and a -I header are found, editing either runs the transform again, and
#    a second build does nothing;
#  - the Makefile with the pre-build step (ptb-transform's dependency file: an edited header re-runs it);
#  - the plain command line (cli.sh);
#  - CMake with ptb-nvcc as CMAKE_CUDA_COMPILER_LAUNCHER (no function): twins in the objects, header
#    edits rebuild;
# and examples/colocate with ptb_transform_sources(... KERNELS ^be$): the BE kernel's twin, no LS twin;
# and ptb_fuse_kernels() on two sources and a local header (rebuilds when the header changes).
#   [EXAMPLES_BIN=DIR] bash test/integration/installed_package.sh BUILD_DIR
# (EXAMPLES_BIN: copy the four programs there, for test/gpu/examples/run_on_gpu.sh on the GPU machine)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD="$(cd "${1:?build directory}" && pwd)"
WORK="$(mktemp -d)"
trap '[ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
fail() { echo "installed_package: FAIL: $*" >&2; exit 1; }
has_twin() {  # has_twin OBJECT: the twin of scale_add_kernel was compiled into it
  nm -C "$1" > "$WORK/symbols.txt" && grep -q ' T scale_add_kernel__ptb(' "$WORK/symbols.txt"
}

cmake --install "$BUILD" --prefix "$WORK/prefix" > "$WORK/install.log"
for f in bin/ptb-transform bin/fuse-kernels bin/ptb-nvcc include/ptb/ptb.cuh lib/cmake/PtbTools/PtbToolsConfig.cmake \
         lib/cmake/PtbTools/PtbToolsConfigVersion.cmake lib/cmake/PtbTools/PtbToolsFunctions.cmake; do
  [ -f "$WORK/prefix/$f" ] || fail "cmake --install did not install $f"
done
cp -r examples/scale-app "$WORK/src"
CUDACXX="$NVCC" cmake -S "$WORK/src" -B "$WORK/build" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" > "$WORK/configure.log" 2>&1 ||
  { cat "$WORK/configure.log"; fail "configure"; }
cmake --build "$WORK/build" > "$WORK/build1.log" 2>&1 || { cat "$WORK/build1.log"; fail "first build"; }
grep -q "$WORK/prefix/bin/ptb-transform" "$WORK/build/build.ninja" || fail "the build does not run the installed ptb-transform"
grep -q 'scale_add_kernel__ptb' "$WORK/build/ptb/scale_app/scale.cu" || fail "no twin in the transformed scale.cu"
# Twins apart (the function's default): the twins part's object defines the twin, scale.cu's refers to it.
grep -q '^#define PTB_TWINS_PART' "$WORK/build/ptb/scale_app/scale.twins.cu" || fail "scale.cu's twins part has no twins"
has_twin "$WORK/build/CMakeFiles/scale_app.dir/ptb/scale_app/scale.twins.cu.o" ||
  fail "the object of scale.cu's twins part has no twin"
nm -C "$WORK/build/CMakeFiles/scale_app.dir/ptb/scale_app/scale.cu.o" > "$WORK/scale-symbols.txt"
grep -q ' U scale_add_kernel__ptb(' "$WORK/scale-symbols.txt" ||
  fail "the object of scale.cu does not refer to the twin: the original was compiled"
cmake --build "$WORK/build" > "$WORK/build-again.log" 2>&1
grep -q 'no work to do' "$WORK/build-again.log" || fail "a second build was not empty"
touch "$WORK/src/scale.h"
cmake --build "$WORK/build" > "$WORK/build2.log" 2>&1 || { cat "$WORK/build2.log"; fail "build after editing scale.h"; }
grep -q 'ptb-transform scale.cu' "$WORK/build2.log" || fail "editing scale.h did not run the transform of scale.cu again"
touch "$WORK/src/include/check.h"
cmake --build "$WORK/build" > "$WORK/build3.log" 2>&1 || { cat "$WORK/build3.log"; fail "build after editing include/check.h"; }
grep -q 'ptb-transform main.cu' "$WORK/build3.log" || fail "editing include/check.h (found through -I) did not run the transform again"
echo "installed_package: CMake (ptb_transform_sources): PASS"

# The Makefile's pre-build step.
make -C "$WORK/src" PTB_PREFIX="$WORK/prefix" NVCC="$NVCC" > "$WORK/make1.log" 2>&1 || { cat "$WORK/make1.log"; fail "make"; }
has_twin "$WORK/src/build-make/scale.o" || fail "make: the object of scale.cu has no twin"
make -C "$WORK/src" PTB_PREFIX="$WORK/prefix" NVCC="$NVCC" > "$WORK/make2.log" 2>&1
grep -q 'is up to date' "$WORK/make2.log" || { cat "$WORK/make2.log"; fail "make: a second make was not empty"; }
sleep 1; touch "$WORK/src/scale.h"
make -C "$WORK/src" PTB_PREFIX="$WORK/prefix" NVCC="$NVCC" > "$WORK/make3.log" 2>&1 || { cat "$WORK/make3.log"; fail "make after editing scale.h"; }
grep -q 'ptb-transform scale.cu' "$WORK/make3.log" || { cat "$WORK/make3.log"; fail "make: editing scale.h did not run the transform of scale.cu again"; }
echo "installed_package: Makefile pre-build step: PASS"

# The plain command line.
PTB_PREFIX="$WORK/prefix" NVCC="$NVCC" bash "$WORK/src/cli.sh" > "$WORK/cli.log" 2>&1 || { cat "$WORK/cli.log"; fail "cli.sh"; }
grep -q 'scale_add_kernel__ptb' "$WORK/src/build-cli/src/scale.cu" || fail "cli.sh: no twin in the transformed scale.cu"
[ -x "$WORK/src/build-cli/scale_app" ] || fail "cli.sh: no program"
echo "installed_package: command line: PASS"

# CMake with the compiler launcher.
CUDACXX="$NVCC" cmake -S "$WORK/src" -B "$WORK/launcher" -G Ninja -DPTB_TRANSFORM_SOURCES=OFF \
  -DCMAKE_CUDA_COMPILER_LAUNCHER="$WORK/prefix/bin/ptb-nvcc" > "$WORK/configure-launcher.log" 2>&1 ||
  { cat "$WORK/configure-launcher.log"; fail "configure with the launcher"; }
cmake --build "$WORK/launcher" > "$WORK/launcher1.log" 2>&1 || { cat "$WORK/launcher1.log"; fail "build with the launcher"; }
has_twin "$WORK/launcher/CMakeFiles/scale_app.dir/scale.cu.o" || fail "launcher: the object of scale.cu has no twin"
cmake --build "$WORK/launcher" > "$WORK/launcher2.log" 2>&1
grep -q 'no work to do' "$WORK/launcher2.log" || fail "launcher: a second build was not empty"
touch "$WORK/src/scale.h"
cmake --build "$WORK/launcher" > "$WORK/launcher3.log" 2>&1 || { cat "$WORK/launcher3.log"; fail "launcher: build after editing scale.h"; }
grep -q 'scale.cu.o' "$WORK/launcher3.log" || fail "launcher: editing scale.h did not recompile scale.cu"
echo "installed_package: CMake with ptb-nvcc as the compiler launcher: PASS"

# The co-location example: plain CUDA, its BE kernel made PTB at build time (KERNELS ^be$).
cp -r examples/colocate "$WORK/colocate-src"
CUDACXX="$NVCC" cmake -S "$WORK/colocate-src" -B "$WORK/colocate" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" \
  > "$WORK/configure-colocate.log" 2>&1 || { cat "$WORK/configure-colocate.log"; fail "configure examples/colocate"; }
cmake --build "$WORK/colocate" > "$WORK/colocate.log" 2>&1 || { cat "$WORK/colocate.log"; fail "build examples/colocate"; }
nm -C "$WORK/colocate/CMakeFiles/colocate.dir/ptb/colocate/colocate.cu.o" \
  "$WORK/colocate/CMakeFiles/colocate.dir/ptb/colocate/colocate.twins.cu.o" > "$WORK/colocate-symbols.txt"
grep -q ' T be__ptb(' "$WORK/colocate-symbols.txt" || fail "colocate: the object has no twin of be"
if grep -q ' T ls__ptb(' "$WORK/colocate-symbols.txt"; then fail "colocate: ls got a twin (KERNELS ^be$)"; fi
echo "installed_package: examples/colocate (generated at build time): PASS"

# ptb_fuse_kernels(): two kernels in two sources (one includes a local header) fused at build time into
# an object library; a second build does nothing; editing the header runs the fusion again.
mkdir -p "$WORK/fuse-src"
cat > "$WORK/fuse-src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
set(CMAKE_CUDA_ARCHITECTURES 90)
project(fused LANGUAGES CXX CUDA)
find_package(PtbTools 0.1 CONFIG REQUIRED)
add_library(fused OBJECT)
target_include_directories(fused PRIVATE include)
ptb_fuse_kernels(OUTPUT fused.cu SOURCES tc.cu cd.cu KERNELS tc=128 cd=64 RATIO 1:2 TARGET fused)
CMAKE
mkdir -p "$WORK/fuse-src/include"
printf '#pragma once\nconstexpr float kScale = 2.0f;\n' > "$WORK/fuse-src/include/scale.h"
printf '#include "scale.h"\n__global__ void tc(float *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] *= kScale;\n  __syncthreads();\n}\n' > "$WORK/fuse-src/tc.cu"
printf '__global__ void cd(float *p, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) p[i] = sinf(p[i]);\n}\n' > "$WORK/fuse-src/cd.cu"
CUDACXX="$NVCC" cmake -S "$WORK/fuse-src" -B "$WORK/fuse" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" \
  > "$WORK/configure-fuse.log" 2>&1 || { cat "$WORK/configure-fuse.log"; fail "configure the ptb_fuse_kernels project"; }
cmake --build "$WORK/fuse" > "$WORK/fuse1.log" 2>&1 || { cat "$WORK/fuse1.log"; fail "build with ptb_fuse_kernels"; }
grep -q 'tc__cd__fused' "$WORK/fuse/fused.cu" || fail "ptb_fuse_kernels: no fused kernel in fused.cu"
nm -C "$WORK/fuse/CMakeFiles/fused.dir/fused.cu.o" > "$WORK/fuse-symbols.txt"  # (not piped into grep -q: pipefail)
grep -q ' T tc__cd__fused(' "$WORK/fuse-symbols.txt" || fail "ptb_fuse_kernels: the object has no fused kernel"
cmake --build "$WORK/fuse" > "$WORK/fuse2.log" 2>&1
grep -q 'no work to do' "$WORK/fuse2.log" || { cat "$WORK/fuse2.log"; fail "ptb_fuse_kernels: a second build was not empty"; }
touch "$WORK/fuse-src/include/scale.h"
cmake --build "$WORK/fuse" > "$WORK/fuse3.log" 2>&1 || { cat "$WORK/fuse3.log"; fail "ptb_fuse_kernels: build after editing scale.h"; }
grep -q 'fuse-kernels -> fused.cu' "$WORK/fuse3.log" || { cat "$WORK/fuse3.log"; fail "ptb_fuse_kernels: editing a header did not run the fusion again"; }
echo "installed_package: CMake (ptb_fuse_kernels): PASS"

# For the GPU machine (which has nvcc but not the tools): the four programs, to run there correct and
# confined (test/gpu/examples/run_on_gpu.sh runs every EXAMPLES_BIN/<way>/scale_app it finds).
if [ -n "${EXAMPLES_BIN:-}" ]; then
  rm -rf "$EXAMPLES_BIN"
  mkdir -p "$EXAMPLES_BIN"/{cmake-function,makefile,cli,cmake-launcher,colocate}
  cp "$WORK/colocate/colocate" "$EXAMPLES_BIN/colocate/"
  cp "$WORK/build/scale_app" "$EXAMPLES_BIN/cmake-function/"
  cp "$WORK/src/build-make/scale_app" "$EXAMPLES_BIN/makefile/"
  cp "$WORK/src/build-cli/scale_app" "$EXAMPLES_BIN/cli/"
  cp "$WORK/launcher/scale_app" "$EXAMPLES_BIN/cmake-launcher/"
  echo "installed_package: scale_app (four ways) and colocate copied to $EXAMPLES_BIN"
fi
