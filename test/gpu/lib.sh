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

# ptb_qosd_up QOSD LOG ARGS...: starts `QOSD run --device 0 ARGS...` in the background (output appended to LOG)
# and waits up to 10 s (less when it exits) until its segment in $PTB_QOSD_DIR is up: the segment whose `status`
# names this controller's pid (other GPUs' segments may share the folder). Sets QOSD_PID, QOSD_SEGMENT and QOSD_KEY (the
# GPU's key, for `status --gpu`). Fails, with LOG's tail on standard error, when it did not come up (QOSD_PID
# is then still set: the caller stops what may be left).
ptb_qosd_up() {
  local qosd=$1 log=$2 s
  shift 2
  "$qosd" run --device 0 "$@" >>"$log" 2>&1 &
  QOSD_PID=$! QOSD_SEGMENT="" QOSD_KEY=""
  for _ in $(seq 200); do
    for s in "$PTB_QOSD_DIR"/ptb-qos.GPU-*; do
      [ -e "$s" ] || continue
      "$qosd" status --gpu "${s##*/ptb-qos.}" 2>/dev/null | grep -q "controller pid $QOSD_PID " &&
        { QOSD_SEGMENT=$s QOSD_KEY=${s##*/ptb-qos.}; return 0; }
    done
    kill -0 "$QOSD_PID" 2>/dev/null || break # it exited (a refusal, a bad option): no need to wait
    sleep 0.05
  done
  echo "ptb-qosd did not start: $(tail -3 "$log")" >&2
  return 1
}
