#!/usr/bin/env bash
# Where the first twin launch's time goes (issue 41: first launch <= +100 us), on the GPU machine (repository
# root), after bench/programs/transform.sh on the development machine:
#
#   bash bench/programs/first_twin.sh [--reps 7] [--programs "sobel_once matmul_naive"] [TRANSFORMED_DIR]
#
# Each program (one launch each, timed from before it) is built as the original and as the transformed
# program with the runtime's host stamps (-DPTB_DEBUG_HOST_STAMPS, probes/host_stamps.cuh), and run --reps
# times in each form, alternating:
#   orig    the original build
#   twin    PTB_MODE=ptb: the launch runs as a twin, the device's runtime state is set up on it
#   eager   the same with CUDA_MODULE_LOADING=EAGER (every module loaded with the context, before the timer)
#   linked  PTB_QOSD=1 under ptb-qosd --policy off (every SM, no cap): the controller's link starts too
#   twin-early, linked-early  twin and linked with PTB_EARLY_SETUP=1: the device set up on the runtime's thread
#           once the program's context is active, before the launch (ptb/detail/early_setup.cuh)
# Prints per program and form the median gpu_ms and its difference to orig in us, then the median time of
# each host step of the first twin launch (ptb/detail/host_stamps.cuh names them; each is the time since the
# step before) and the host's total from dispatch to the twin's launch committed. The rest of a form's extra
# time is on the device (the twin's own run) or in CUDA's calls after the launch.
# PTB_RUNTIME_INCLUDE (default runtime/include): the runtime's include folder for the transformed build (two
# runtimes compared in one call).
set -u
cd "$(dirname "$0")/../.."
. test/gpu/lib.sh
. bench/programs/script_lib.sh
REPS=7 TDIR=build/bench-programs PROGRAMS="sobel_once matmul_naive"
while [ $# -gt 0 ]; do
  case $1 in --reps) REPS=$2; shift;; --programs) PROGRAMS=$2; shift;; *) TDIR=$1;; esac; shift
done
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
B=build/first-twin
rm -rf $B && mkdir -p $B
FLAGS=(-std=c++17 -O2 -arch=sm_90 -lineinfo -I bench/programs)
run_header first_twin.sh
builds=()
for n in $PROGRAMS; do
  mapfile -t TW < <(transformed_sources "$TDIR" "$n")
  "$NVCC" "${FLAGS[@]}" "bench/programs/$n.cu" -o "$B/$n.orig" >"$B/$n.orig.log" 2>&1 &
  builds+=($!)
  "$NVCC" "${FLAGS[@]}" -I "${PTB_RUNTIME_INCLUDE:-runtime/include}" -DPTB_DEBUG_HOST_STAMPS -include bench/programs/probes/host_stamps.cuh \
    "${TW[@]}" -o "$B/$n.ptb" >"$B/$n.ptb.log" 2>&1 &
  builds+=($!)
done
start_qosd "$B/qosd" "$B/qosd.log" || exit 1
wait "${builds[@]}" # (not the controller, which runs until the end)
for n in $PROGRAMS; do
  for v in orig ptb; do [ -x "$B/$n.$v" ] || { echo "build of $n.$v failed:"; tail -20 "$B/$n.$v.log"; exit 1; }; done
done
FORMS=(orig twin eager linked twin-early linked-early)
declare -A ENVS=([orig]="" [twin]="PTB_MODE=ptb" [eager]="PTB_MODE=ptb CUDA_MODULE_LOADING=EAGER" [linked]="PTB_QOSD=1"
                 [twin-early]="PTB_MODE=ptb PTB_EARLY_SETUP=1" [linked-early]="PTB_QOSD=1 PTB_EARLY_SETUP=1")
fail=0
for n in $PROGRAMS; do
  "$B/$n.orig" >/dev/null 2>&1  # warm-up, not counted
  for ((r = 0; r < REPS; ++r)); do
    k=$((r % ${#FORMS[@]}))
    for f in "${FORMS[@]:k}" "${FORMS[@]:0:k}"; do
      exe="$B/$n.ptb"; [ "$f" = orig ] && exe="$B/$n.orig"
      # shellcheck disable=SC2086
      out=$(env -u PTB_MODE -u PTB_QOSD -u PTB_EARLY_SETUP ${ENVS[$f]} timeout 60 "$exe" 2>&1) || { echo "RUN FAILED: $n $f"; echo "$out" | tail -5; fail=1; continue; }
      echo "$out" | awk '/^PROGRAM/ {print $4}' >>"$B/$n.$f.ms"
      echo "$out" | grep '^HOSTSTAMPS' >>"$B/$n.$f.stamps"
    done
  done
  o=$(median <"$B/$n.orig.ms")
  echo ""
  echo "$n: orig $o ms (median of $REPS)"
  for f in "${FORMS[@]:1}"; do
    m=$(median <"$B/$n.$f.ms")
    echo "  $f: $m ms, $(awk -v m="$m" -v o="$o" 'BEGIN {printf "%+.1f", (m - o) * 1000}') us over orig"
    # the median of each step over the runs (the steps of one form come in the same order in every run)
    awk '{for (i = 2; i < NF; i += 2) {name[i] = $i; v[i] = v[i] " " $(i + 1)}; nf = NF}
         END {for (i = 2; i < nf; i += 2) print name[i], v[i]}' "$B/$n.$f.stamps" 2>/dev/null |
      while read -r step vals; do printf '    %-11s %8s us\n' "$step" "$(echo "$vals" | median)"; done
  done
done
exit $fail
