# Shell helpers shared by the GPU scripts of bench/programs (source it; it runs nothing).

# The median of the numbers on standard input, separated by spaces or newlines (the lower middle one of an
# even count; "nan" entries skipped); "nan" when there is none.
median() { tr ' ' '\n' | grep -v '^$' | grep -v nan | sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else print a[int((NR + 1) / 2)]}'; }

# transformed_sources DIR NAME: the files of program NAME as bench/programs/transform.sh wrote it into DIR,
# one per line: DIR/NAME.cu, and DIR/NAME.twins.cu when the twins went apart (nvcc builds both into one program).
transformed_sources() {
  echo "$1/$2.cu"
  [ -f "$1/$2.twins.cu" ] && echo "$1/$2.twins.cu"
  return 0
}

# start_qosd BUILD_DIR LOG: builds ptb-qosd into BUILD_DIR (ptb_build_qosd, test/gpu/lib.sh, which the caller
# sources), starts it on CUDA's device 0 with `--policy off` (BE has every SM, no cap: what a
# controller publishes between LS requests) in a private PTB_QOSD_DIR (exported), and waits until its segment
# is up (ptb_qosd_up). Sets QOSD_PID; removes the folder and stops the controller at exit. Returns 1, with the
# log's tail on standard error, when it cannot build or start it.
start_qosd() {
  local dir=$1 log=$2
  ptb_build_qosd "$dir" >"$log" 2>&1 ||
    { echo "ptb-qosd: build failed" >&2; tail -20 "$log" >&2; return 1; }
  PTB_QOSD_DIR="$(mktemp -d -p /dev/shm)"
  export PTB_QOSD_DIR
  ptb_qosd_up "$dir/tools/ptb-qosd/ptb-qosd" "$log" --policy off --mps off
  local rc=$?
  trap 'kill $QOSD_PID 2>/dev/null; rm -rf "$PTB_QOSD_DIR"' EXIT
  return $rc
}

# run_header NAME: the first line of a script's output: its name, the time (UTC), the GPU and driver, the tree.
run_header() {
  echo "== $1: $(date -u '+%F %T') UTC; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1);" \
       "tree $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
}
