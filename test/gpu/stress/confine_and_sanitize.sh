#!/bin/bash
# On the GPU machine, after test/gpu/run_on_gpu.sh (corpus builds in build/gpu-bin) and, for the fused
# kernels, test/fusion/semantics/run_on_gpu.sh (build/fusion-semantics-bin):
#  1. every transformed corpus program confined to several SM sets and caps (PASS expected from each);
#  2. compute-sanitizer memcheck, racecheck and synccheck on the transformed corpus, the stress programs
#     and the fused-kernel checks, confined (PTB_SMS=0-65 PTB_BLOCKS_PER_SM=2) and, for memcheck, not.
# Prints one line per run and a count per group; logs of failures in $OUT/sanitize-logs.tgz; exits 1 when
# any run failed or timed out.
#   bash test/gpu/stress/confine_and_sanitize.sh [--confine-only | --sanitize-only] [--jobs N]
# SAN_TOOLS (default "memcheck racecheck synccheck") and SAN_PROGRAMS (an extended regex on the program's
# name, default all) split the sanitizer runs over several device calls: the four passes over the whole
# corpus took longer than the 256 s left in one call on 2026-11-23.
set -u
cd "$(dirname "$0")/../../.."
OUT=${OUT:-out}; mkdir -p "$OUT"
MODE=all JOBS=8
while [ $# -gt 0 ]; do case $1 in --confine-only) MODE=confine;; --sanitize-only) MODE=sanitize;; --jobs) JOBS=$2; shift;; esac; shift; done
SAN=${SAN:-/usr/local/cuda/bin/compute-sanitizer}
# A launch under a policy that runs its original kernel aborts the program after its report
# (ptb/fallback.cuh): every confined launch of every run must be a twin.
export PTB_STRICT=1
BIN=build/gpu-bin/ptb
LOGS=$(mktemp -d)
# one_run <label> <timeout> <env...> -- <cmd...>: PASS / FAIL(rc) / TIMEOUT, log kept on failure
one_run() {
  local label=$1 lim=$2; shift 2
  local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  local log="$LOGS/$(echo "$label" | tr -c 'A-Za-z0-9_.-' '_').log"
  timeout -s KILL "$lim" env "${envs[@]}" "$@" >"$log" 2>&1
  local rc=$?
  if [ $rc = 0 ] && ! grep -q "^FAIL" "$log"; then echo "PASS $label"; rm -f "$log"
  elif [ $rc = 99 ] && [[ $label == synccheck* ]] && synccheck_only_call_sites "$log"; then
    echo "KNOWN(synccheck: task_barrier call sites) $label"
  elif [ $rc = 137 ]; then echo "TIMEOUT $label"
  else echo "FAIL($rc) $label"; fi
}
# Whether every error synccheck printed is its report of one barrier reached from several call sites in
# ptb::detail::task_barrier: the parking twins' barrier, legal in PTX, which synccheck reports even in a
# correct program (test/gpu/runtime/synccheck_model.sh; docs/ptb-transform.md, "Parking"). Any other
# synccheck error is a failure. (synccheck stops the kernel at its first report, so the program itself
# then fails with cudaErrorLaunchFailure: its result under synccheck says nothing; its plain, memcheck and
# racecheck runs check it.)
synccheck_only_call_sites() {
  local all site
  all=$(grep -c "^========= [A-Z].* error detected\|^========= Barrier error" "$1")
  site=$(grep -A1 "^========= Barrier error detected. Divergent thread(s) in block." "$1" | grep -c "^=========     at .*ptb::detail::task_barrier(bool)")
  [ "$all" -gt 0 ] && [ "$all" = "$site" ]
}
export -f one_run synccheck_only_call_sites; export LOGS
count() { sort | tee -a "$OUT/confine-sanitize.txt" | awk '{print $1}' | sed 's/(.*//' | sort | uniq -c | tr '\n' ' '; echo; }
if [ $MODE != sanitize ]; then
  for pol in "PTB_SMS=0-65" "PTB_SMS=66-131 PTB_BLOCKS_PER_SM=2" "PTB_SMS=7" "PTB_SMS=0,2,5,64-70,131 PTB_BLOCKS_PER_SM=1" "PTB_BLOCKS_PER_SM=1"; do
    echo "== corpus confined: $pol"
    for b in $BIN/*; do echo "confined[$pol] $(basename $b)|$pol|$b"; done |
      xargs -P "$JOBS" -d '\n' -I{} bash -c 'IFS="|" read -r l p b <<< "{}"; one_run "$l" 120 $p -- "$b"' | count
  done
fi
if [ $MODE != confine ]; then
  # programs that provoke failing API calls on purpose and check the errors themselves: the sanitizer's
  # report of those calls is not a finding (--report-api-errors no for them only)
  ON_PURPOSE=" cuda_launch_kernel dynamic_shared_over_48k invalid_config_error host_loop_copies "
  list() {  # label|env|command
    for b in $BIN/*; do
      n=$(basename $b)
      if [[ $ON_PURPOSE == *" $n "* ]]; then echo "$n|$1|--report-api-errors no $b"; else echo "$n|$1|$b"; fi
    done
    # racecheck costs far more per launch than the other tools, and keeps host memory per launch: with
    # chains of hundreds of launches seed 42's cases did not finish in 280 s, and its case 42 (a policy
    # changed all along, so the runtime sends resume batches all along) grew the process to 129 GB until
    # the OOM killer stopped it (chains of 8), and by about 0.4 GB/s with chains of 2 until a 150 s limit
    # (H100, 2026-11-24). Under racecheck: cases 43-47 (none changes its policy), chains of 8 launches and
    # 2048 tasks at most.
    if [ "$2" = racecheck ]; then
      echo "stress|$1|build-stress/stress --cases 5 --min-launches 0 --seed 43 --max-tasks 2048 --max-chain 8 --hang-seconds ${SAN_TIMEOUT:-300}"
    else
      echo "stress|$1|build-stress/stress --cases 6 --min-launches 0 --seed 42 --hang-seconds ${SAN_TIMEOUT:-300}"
    fi
    echo "wavefront|$1|build-stress/wavefront --width 40"
    for f in build/fusion-semantics-bin/*; do [ -x "$f" ] && echo "fused-$(basename $f)|$1|$f"; done
  }
  for tool in ${SAN_TOOLS:-memcheck racecheck synccheck}; do
    for pol in "PTB_SMS=0-65 PTB_BLOCKS_PER_SM=2" $([ $tool = memcheck ] && echo "PTB_MODE=ptb"); do
      echo "== compute-sanitizer --tool $tool, $pol"
      list "$pol" "$tool" | grep -E "^(${SAN_PROGRAMS:-.*})\|" | xargs -P "$JOBS" -d '\n' -I{} bash -c 'IFS="|" read -r l p c <<< "{}";
        one_run "'$tool'[$p] $l" ${SAN_TIMEOUT:-300} $p -- '"$SAN"' --tool '$tool' --error-exitcode 99 --print-limit 20 $c' | count
    done
  done
fi
mkdir -p "$OUT/sanitize-logs"; cp "$LOGS"/*.log "$OUT/sanitize-logs/" 2>/dev/null
tar czf "$OUT/sanitize-logs.tgz" -C "$LOGS" . 2>/dev/null; rm -rf "$OUT/sanitize-logs"
# exit status: 1 when any run failed or timed out (the failing runs listed, for verify_on_gpu.sh's summary)
if grep -qE "^(FAIL|TIMEOUT)" "$OUT/confine-sanitize.txt" 2>/dev/null; then
  grep -E "^(FAIL|TIMEOUT)" "$OUT/confine-sanitize.txt"; exit 1
fi
