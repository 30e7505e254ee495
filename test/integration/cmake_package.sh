#!/usr/bin/env bash
# No GPU needed (CI): installs the build into a fresh prefix with `cmake --install`, then configures and
# builds examples/cmake-function (a copy, in a temporary directory) against the installed PtbTools package
# only: find_package(PtbTools CONFIG), ptb_transform_sources(). Checks that the target compiled the
# transformed copies (the twin's host stub is in the object), that a local header and a -I header were found, that
# editing a header the source includes runs the transform again and that a second build does nothing.
#   bash test/integration/cmake_package.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD="$(cd "${1:?build directory}" && pwd)"
WORK="$(mktemp -d)"
trap '[ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
fail() { echo "cmake_package: FAIL: $*" >&2; exit 1; }

cmake --install "$BUILD" --prefix "$WORK/prefix" > "$WORK/install.log"
for f in bin/ptb-transform bin/fuse-kernels include/ptb/ptb.cuh lib/cmake/PtbTools/PtbToolsConfig.cmake \
         lib/cmake/PtbTools/PtbToolsConfigVersion.cmake lib/cmake/PtbTools/PtbToolsFunctions.cmake; do
  [ -f "$WORK/prefix/$f" ] || fail "cmake --install did not install $f"
done
cp -r examples/cmake-function "$WORK/src"
CUDACXX="$NVCC" cmake -S "$WORK/src" -B "$WORK/build" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" > "$WORK/configure.log" 2>&1 ||
  { cat "$WORK/configure.log"; fail "configure"; }
cmake --build "$WORK/build" > "$WORK/build1.log" 2>&1 || { cat "$WORK/build1.log"; fail "first build"; }
grep -q "$WORK/prefix/bin/ptb-transform" "$WORK/build/build.ninja" || fail "the build does not run the installed ptb-transform"
grep -q 'scale_add_kernel__ptb' "$WORK/build/ptb/scale_app/scale.cu" || fail "no twin in the transformed scale.cu"
nm -C "$WORK/build/CMakeFiles/scale_app.dir/ptb/scale_app/scale.cu.o" > "$WORK/symbols.txt"
grep -q ' T scale_add_kernel__ptb(' "$WORK/symbols.txt" ||
  fail "the object of scale.cu has no twin: the original was compiled"
cmake --build "$WORK/build" > "$WORK/build-again.log" 2>&1
grep -q 'no work to do' "$WORK/build-again.log" || fail "a second build was not empty"
touch "$WORK/src/scale.h"
cmake --build "$WORK/build" > "$WORK/build2.log" 2>&1 || { cat "$WORK/build2.log"; fail "build after editing scale.h"; }
grep -q 'ptb-transform scale.cu' "$WORK/build2.log" || fail "editing scale.h did not run the transform of scale.cu again"
touch "$WORK/src/include/check.h"
cmake --build "$WORK/build" > "$WORK/build3.log" 2>&1 || { cat "$WORK/build3.log"; fail "build after editing include/check.h"; }
grep -q 'ptb-transform main.cu' "$WORK/build3.log" || fail "editing include/check.h (found through -I) did not run the transform again"
echo "cmake_package: installed package, ptb_transform_sources, dependencies: PASS"
