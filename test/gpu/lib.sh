# Shell functions shared by the GPU test scripts (source it; it sets no options of its own).
#   . test/gpu/lib.sh

# ptb_nvcc: prints the nvcc to use: $NVCC when set, else /usr/local/cuda/bin/nvcc, else nvcc on PATH;
# fails (and says so) when there is none.
ptb_nvcc() {
  local n="${NVCC:-/usr/local/cuda/bin/nvcc}"
  [ -x "$n" ] || n="$(command -v "$n" || command -v nvcc || true)"
  [ -n "$n" ] || { echo "nvcc not found (set NVCC)" >&2; return 1; }
  echo "$n"
}

# ptb_tool NAME: the built tool (build/tools/NAME/NAME, or $BUILD's), or nothing when it is not built.
ptb_tool() {
  local t="${BUILD:-build}/tools/$1/$1"
  [ -x "$t" ] && echo "$t"
  return 0
}

# ptb_transform_tool: prints the ptb-transform to use: $PTB_TRANSFORM when set, else the build's; fails (and
# says so) when it is not an executable.
ptb_transform_tool() {
  local t="${PTB_TRANSFORM:-build/tools/ptb-transform/ptb-transform}"
  [ -x "$t" ] || { echo "$t not found: build the tools (cmake --build build) or set PTB_TRANSFORM" >&2; return 1; }
  echo "$t"
}

# ptb_same_sources DIR SCRIPT: DIR's SOURCES.sha256 (written by SCRIPT on the development machine, when
# there is one) still matches the sources here; else says which differ and how to remake DIR, and fails.
ptb_same_sources() {
  local dir="$1" script="$2"
  [ -f "$dir/SOURCES.sha256" ] && command -v sha256sum >/dev/null || return 0
  sha256sum -c --quiet "$dir/SOURCES.sha256" >/dev/null 2>&1 && return 0
  echo "ERROR: $dir was transformed from other sources than this tree holds now:" >&2
  sha256sum -c "$dir/SOURCES.sha256" 2>&1 | grep -v ': OK$' >&2
  echo "       run $script again on the development machine and carry $dir" >&2
  return 1
}

# ptb_build_qosd DIR: builds ptb-qosd and libptb-ls.so with the project's CMake without the compiler tools (the
# GPU machine has no clang) into DIR: DIR/tools/ptb-qosd/ptb-qosd, DIR/runtime/ls/libptb-ls.so. CMake's and the
# build's output go to standard output; fails when either fails.
ptb_build_qosd() {
  cmake -S . -B "$1" -G Ninja -DPTB_COMPILER=OFF -DBUILD_TESTING=OFF && cmake --build "$1"
}
