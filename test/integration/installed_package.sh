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
# and ptb_fuse_kernels() on two sources and a local header (rebuilds when the header changes);
# and examples/multi-file (four .cu files, kernels in local headers, BLOCK given as a compile option and in
# CMAKE_CUDA_FLAGS, separable compilation, a helper library in a sub-folder): ptb_transform_sources with
# Ninja, the launcher with Unix Makefiles, its Makefile with NVCC="ptb-nvcc nvcc", cli.sh;
# and NVIDIA's public eigenvalues sample (test/third_party/cuda-samples) with its own CMakeLists.txt:
# ptb_transform_sources with Ninja, Unix Makefiles and Ninja Multi-Config, the launcher with Ninja and Unix
# Makefiles, the command line; each built, rebuilt with nothing to do, and rebuilt after an edit of a
# kernel header. The docs the tools name are installed (share/doc/ptb-tools), and the fusion tuner's source
# (share/ptb-tools/tuner).
#   [EXAMPLES_BIN=DIR] bash test/integration/installed_package.sh [--subset] BUILD_DIR
# --subset (CI's tier, PTB_EXHAUSTIVE_CHECKS=OFF): each way of building is still built at least once, each
# generator with each of the function and the launcher, and each project at least once with the function
# and with the launcher; the repeats are left out (each says so when skipped):
# eigenvalues with the function and Ninja (the function with Ninja: scale-app and multi-file; eigenvalues
# with the function: Unix Makefiles and Ninja Multi-Config), eigenvalues with the launcher and Ninja (the
# launcher with Ninja: scale-app; eigenvalues with the launcher: Unix Makefiles), eigenvalues' command line
# (separable compilation on the command line: multi-file's cli.sh) and multi-file's cli.sh run again after
# an edit (the first run stays).
# (EXAMPLES_BIN: copy the four programs there, for test/gpu/examples/run_on_gpu.sh on the GPU machine)
set -euo pipefail
cd "$(dirname "$0")/../.."
SUBSET=0
if [ "${1:-}" = --subset ]; then SUBSET=1; shift; fi
BUILD="$(cd "${1:?build directory}" && pwd)"
WORK="$(mktemp -d)"
trap '[ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
fail() { echo "installed_package: FAIL: $*" >&2; exit 1; }
in_tier() {  # in_tier WHAT: true unless --subset leaves WHAT out (a repeat; the header says what covers it)
  [ "$SUBSET" = 0 ] && return 0
  echo "installed_package: $1: not built in CI's tier (a repeat; PTB_EXHAUSTIVE_CHECKS=ON builds it)"
  return 1
}
has_twin() {  # has_twin OBJECT [KERNEL]: the twin of KERNEL (default scale_add_kernel) was compiled into it
  nm -C "$1" > "$WORK/symbols.txt" && grep -q " T ${2:-scale_add_kernel}__ptb(" "$WORK/symbols.txt"
}

cmake --install "$BUILD" --prefix "$WORK/prefix" > "$WORK/install.log"
for f in bin/ptb-transform bin/fuse-kernels bin/ptb-nvcc include/ptb/ptb.cuh lib/cmake/PtbTools/PtbToolsConfig.cmake \
         lib/cmake/PtbTools/PtbToolsConfigVersion.cmake lib/cmake/PtbTools/PtbToolsFunctions.cmake \
         lib/cmake/PtbTools/PtbTransformRun.cmake share/doc/ptb-tools/generated-code.md share/doc/ptb-tools/user-guide.md \
         share/ptb-tools/tuner/fusion_tuner.cu share/ptb-tools/tuner/README.md; do
  [ -f "$WORK/prefix/$f" ] || fail "cmake --install did not install $f"
done
# libptb-ls.so, where the build has it (a CUDA toolkit with CUPTI): the library and its C header.
if [ -f "$BUILD/runtime/ls/libptb-ls.so" ]; then
  for f in lib/libptb-ls.so include/ptb/ptb_ls.h; do
    [ -f "$WORK/prefix/$f" ] || fail "cmake --install did not install $f"
  done
fi
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

# examples/multi-file, every way. A header's kernel is edited before each rebuild (a new constant each
# time): the rebuild must recompile the source that includes it and link again.
cp -r examples/multi-file "$WORK/mf"
EDITS=0
edit_kernel() {
  EDITS=$((EDITS + 1))
  sed -i "s/y\[i\] = helper_twice(x\[i\]).*;/y[i] = helper_twice(x[i]) + 0.f * $EDITS;/" "$WORK/mf/src/kernels/scale.cuh"
  grep -q "0.f \* $EDITS;" "$WORK/mf/src/kernels/scale.cuh" || fail "multi-file: the edit of scale.cuh did not apply"
}
nothing_done() {  # nothing_done LOG: a build that ran no command
  grep -q 'no work to do' "$1" && return 0
  ! grep -qE 'Building|Linking|ptb-transform ' "$1"
}
# cmake_cycle NAME GENERATOR [cmake args...]: configures and builds the project that the P_* variables
# describe into $WORK/$P_TAG-NAME, then checks: the program is there; P_OBJECT holds the twin of P_KERNEL;
# a second build does nothing; after P_EDIT (an edit of a kernel header) the build recompiles P_OBJECT
# alone (no object matching P_OTHERS) and links; the build after it does nothing. P_NO_TWINS_PART=1: no
# twins part may be made. A multi-config generator builds Release.
cmake_cycle() {
  local name="$1" generator="$2" dir="$WORK/$P_TAG-$1" config_args=() what="$P_LABEL $1" program object
  shift 2
  [ "$generator" = "Ninja Multi-Config" ] && config_args=(--config Release)
  CUDACXX="$NVCC" cmake -S "$P_SRC" -B "$dir" -G "$generator" -DCMAKE_PREFIX_PATH="$WORK/prefix" "$@" \
    > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; fail "$what: configure"; }
  cmake --build "$dir" -j2 "${config_args[@]}" > "$dir.1.log" 2>&1 || { cat "$dir.1.log"; fail "$what: build"; }
  program="$(find "$dir" -name "$P_PROGRAM" -type f -perm -u+x | head -1)"
  [ -n "$program" ] || fail "$what: no program"
  object="$(find "$dir" -name "$P_OBJECT" | head -1)"
  has_twin "$object" "$P_KERNEL" || fail "$what: $object has no twin of $P_KERNEL"
  if [ "${P_NO_TWINS_PART:-0}" = 1 ] && [ -n "$(find "$dir" -name '*.twins.cu*')" ]; then
    fail "$what: a twins part was made (its kernels sit in headers)"
  fi
  cmake --build "$dir" -j2 "${config_args[@]}" > "$dir.2.log" 2>&1 || { cat "$dir.2.log"; fail "$what: second build"; }
  nothing_done "$dir.2.log" || { cat "$dir.2.log"; fail "$what: a second build was not empty"; }
  "$P_EDIT"
  cmake --build "$dir" -j2 "${config_args[@]}" > "$dir.3.log" 2>&1 || { cat "$dir.3.log"; fail "$what: build after the edit"; }
  grep -q "$P_OBJECT" "$dir.3.log" && grep -q 'Linking' "$dir.3.log" ||
    { cat "$dir.3.log"; fail "$what: the edit did not recompile $P_OBJECT and link"; }
  if grep -qE "$P_OTHERS" "$dir.3.log"; then cat "$dir.3.log"; fail "$what: the edit recompiled other sources"; fi
  has_twin "$object" "$P_KERNEL" || fail "$what: no twin of $P_KERNEL after the edit"
  cmake --build "$dir" -j2 "${config_args[@]}" > "$dir.4.log" 2>&1 || { cat "$dir.4.log"; fail "$what: build after the edit's build"; }
  nothing_done "$dir.4.log" || { cat "$dir.4.log"; fail "$what: the build after the edit's build was not empty"; }
  echo "installed_package: $what: PASS"
}
P_TAG=mf P_LABEL=multi-file P_SRC="$WORK/mf" P_PROGRAM=multi_file P_OBJECT=scale.cu.o P_KERNEL=scale_kernel
P_EDIT=edit_kernel P_OTHERS='(main|sum|fill)\.cu\.o' P_NO_TWINS_PART=0
cmake_cycle function-ninja Ninja
grep -q "0.f \* $EDITS;" "$WORK/mf-function-ninja/ptb/multi_file/src/kernels/scale.ptb.cuh" ||
  fail "multi-file function-ninja: the transformed copy of scale.cuh does not hold the edit"
cmake_cycle launcher-make "Unix Makefiles" -DPTB_TRANSFORM_SOURCES=OFF -DCMAKE_CUDA_COMPILER_LAUNCHER="$WORK/prefix/bin/ptb-nvcc"

# Its Makefile, nvcc called as "ptb-nvcc nvcc" (GCC-only host flags given too: they reach nvcc alone).
MF_MAKE=(make -C "$WORK/mf" -j2 NVCC="$WORK/prefix/bin/ptb-nvcc $NVCC -Xcompiler=-fno-gnu-unique")
"${MF_MAKE[@]}" > "$WORK/mf-make1.log" 2>&1 || { cat "$WORK/mf-make1.log"; fail "multi-file make"; }
has_twin "$WORK/mf/build-make/src/scale.o" scale_kernel || fail "multi-file make: the object of scale.cu has no twin"
"${MF_MAKE[@]}" > "$WORK/mf-make2.log" 2>&1
grep -q 'is up to date' "$WORK/mf-make2.log" || { cat "$WORK/mf-make2.log"; fail "multi-file make: a second make was not empty"; }
sleep 1; edit_kernel
"${MF_MAKE[@]}" > "$WORK/mf-make3.log" 2>&1 || { cat "$WORK/mf-make3.log"; fail "multi-file make after editing scale.cuh"; }
grep -q 'src/scale.o' "$WORK/mf-make3.log" || { cat "$WORK/mf-make3.log"; fail "multi-file make: editing scale.cuh did not recompile scale.cu"; }
echo "installed_package: multi-file, Makefile with NVCC=\"ptb-nvcc nvcc\": PASS"

# cli.sh: the plain command line, run again after an edit.
PTB_PREFIX="$WORK/prefix" NVCC="$NVCC" bash "$WORK/mf/cli.sh" > "$WORK/mf-cli1.log" 2>&1 || { cat "$WORK/mf-cli1.log"; fail "multi-file cli.sh"; }
[ -x "$WORK/mf/build-cli/multi_file" ] || fail "multi-file cli.sh: no program"
if in_tier "multi-file, command line again after an edit"; then
  edit_kernel
  PTB_PREFIX="$WORK/prefix" NVCC="$NVCC" bash "$WORK/mf/cli.sh" > "$WORK/mf-cli2.log" 2>&1 || { cat "$WORK/mf-cli2.log"; fail "multi-file cli.sh after editing scale.cuh"; }
  grep -rq "0.f \* $EDITS;" "$WORK/mf/build-cli/src" || fail "multi-file cli.sh: the transformed scale.cuh does not hold the edit"
fi
echo "installed_package: multi-file, command line: PASS"

# NVIDIA's eigenvalues sample (test/third_party/cuda-samples: four .cu files, kernels in local headers, a
# helper folder, CMAKE_CUDA_FLAGS and target_compile_options, separable compilation), its own CMakeLists.txt
# with the architecture list cut to 90: ptb_transform_sources (two lines appended) with Ninja, Unix
# Makefiles and Ninja Multi-Config, the launcher with Ninja and Unix Makefiles, and the command line. Each
# built, rebuilt with nothing to do, and rebuilt after an edit of a kernel header (only bisect_small.cu
# recompiled). Its kernels all sit in headers: no twins part is made or compiled.
cp -r test/third_party/cuda-samples "$WORK/cs"
EIG="$WORK/cs/Samples/2_Concepts_and_Techniques/eigenvalues"
sed -i 's/^set(CMAKE_CUDA_ARCHITECTURES .*/set(CMAKE_CUDA_ARCHITECTURES 90)/' "$EIG/CMakeLists.txt"
grep -q '^set(CMAKE_CUDA_ARCHITECTURES 90)$' "$EIG/CMakeLists.txt" || fail "eigenvalues: the architecture line did not change"
cp "$EIG/CMakeLists.txt" "$EIG/CMakeLists.plain"
printf 'find_package(PtbTools 0.1 CONFIG REQUIRED)\nptb_transform_sources(eigenvalues)\n' >> "$EIG/CMakeLists.txt"
cp "$EIG/CMakeLists.txt" "$EIG/CMakeLists.function"
EIG_EDITS=0
edit_eig_kernel() {
  EIG_EDITS=$((EIG_EDITS + 1))
  echo "// edit $EIG_EDITS" >> "$EIG/bisect_kernel_small.cuh"
}
eig_cmake() {  # eig_cmake NAME GENERATOR CMAKELISTS [cmake args...]: cmake_cycle with CMakeLists.CMAKELISTS
  cp "$EIG/CMakeLists.$3" "$EIG/CMakeLists.txt"
  local name="$1" generator="$2"
  shift 3
  cmake_cycle "$name" "$generator" "$@"
}
P_TAG=eig P_LABEL=eigenvalues P_SRC="$EIG" P_PROGRAM=eigenvalues P_OBJECT=bisect_small.cu.o P_KERNEL=bisectKernel
P_EDIT=edit_eig_kernel P_OTHERS='(bisect_large|bisect_util|main)\.cu\.o' P_NO_TWINS_PART=1
if in_tier "eigenvalues function-ninja"; then
  eig_cmake function-ninja Ninja function
  grep -q "// edit $EIG_EDITS" "$WORK/eig-function-ninja/ptb/eigenvalues/bisect_kernel_small.ptb.cuh" ||
    fail "eigenvalues function-ninja: the transformed copy of bisect_kernel_small.cuh does not hold the edit"
fi
eig_cmake function-make "Unix Makefiles" function
# Ninja Multi-Config: each configuration has its own transformed copies, so switching configurations
# neither transforms nor compiles again.
eig_cmake function-multi-config "Ninja Multi-Config" function
[ -f "$WORK/eig-function-multi-config/ptb/eigenvalues/Release/bisect_small.cu" ] ||
  fail "eigenvalues function-multi-config: no transformed copy under ptb/eigenvalues/Release"
cmake --build "$WORK/eig-function-multi-config" -j2 --config Debug > "$WORK/eig-multi-debug.log" 2>&1 ||
  { cat "$WORK/eig-multi-debug.log"; fail "eigenvalues function-multi-config: the Debug build"; }
cmake --build "$WORK/eig-function-multi-config" -j2 --config Release > "$WORK/eig-multi-release.log" 2>&1 ||
  { cat "$WORK/eig-multi-release.log"; fail "eigenvalues function-multi-config: Release after Debug"; }
nothing_done "$WORK/eig-multi-release.log" ||
  { cat "$WORK/eig-multi-release.log"; fail "eigenvalues function-multi-config: Release after Debug was not empty"; }
if in_tier "eigenvalues launcher-ninja"; then
  eig_cmake launcher-ninja Ninja plain -DCMAKE_CUDA_COMPILER_LAUNCHER="$WORK/prefix/bin/ptb-nvcc"
fi
eig_cmake launcher-make "Unix Makefiles" plain -DCMAKE_CUDA_COMPILER_LAUNCHER="$WORK/prefix/bin/ptb-nvcc"
# The command line: transform the four sources, compile them with separable compilation, link.
if in_tier "eigenvalues, command line"; then
  mkdir -p "$WORK/eig-cli/src"
  "$WORK/prefix/bin/ptb-transform" --quiet "$EIG"/{bisect_large,bisect_small,bisect_util,main}.cu --output-dir "$WORK/eig-cli/src" \
    -- -I"$WORK/cs/Common" -std=c++17 --extended-lambda > "$WORK/eig-cli.log" 2>&1 || { cat "$WORK/eig-cli.log"; fail "eigenvalues cli: ptb-transform"; }
  for f in bisect_large bisect_small bisect_util main; do
    "$NVCC" -std=c++17 -arch=sm_90 -rdc=true --extended-lambda -I"$WORK/prefix/include" -I"$WORK/cs/Common" -I"$EIG" \
      -c "$WORK/eig-cli/src/$f.cu" -o "$WORK/eig-cli/$f.o" >> "$WORK/eig-cli.log" 2>&1 || { cat "$WORK/eig-cli.log"; fail "eigenvalues cli: nvcc $f.cu"; }
  done
  has_twin "$WORK/eig-cli/bisect_small.o" bisectKernel || fail "eigenvalues cli: bisect_small.o has no twin of bisectKernel"
  "$NVCC" -std=c++17 -arch=sm_90 -rdc=true -I"$WORK/cs/Common" "$WORK/eig-cli"/*.o "$EIG/gerschgorin.cpp" "$EIG/matlab.cpp" \
    -o "$WORK/eig-cli/eigenvalues" >> "$WORK/eig-cli.log" 2>&1 || { cat "$WORK/eig-cli.log"; fail "eigenvalues cli: link"; }
  echo "installed_package: eigenvalues, command line: PASS"
fi

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
