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
