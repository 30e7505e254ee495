#!/usr/bin/env bash
# Issue 40's goal rows in one device call (GPU machine, repository root; build/bench-colocate carried from the
# development machine, as for processes.sh):
#
#   BES="compute memory wmma" GATES="gate --poll-us 5 --between-after-us 100" LIMIT=585 bash bench/colocate/goal.sh
#
# Builds processes.sh's programs when they are not built; then, in that order and each only when its variable is
# set: RT="test_request_gate ..." runs those runtime GPU tests (test/gpu/runtime/run_on_gpu.sh), MEMCHECK=1 runs
# build-rt/test_request_gate under compute-sanitizer memcheck, FAULTS=1 runs processes.sh PART=faults; then the
# goal rows (processes.sh PART=goal REQUESTS=${REQUESTS:-20500} with GATES) for each BE of BES, the time left
# shared among them; the BEs after the first take its LS capacity and LS-alone p99s (processes.sh LS_REFS;
# SHARE_LS=0: each measures its own). OFFS, as processes.sh takes it: more qosd-off-be-solo rows, each with its BE
# environment. Each step runs under `timeout -k 15` (a step whose teardown hangs is killed, and the rest still
# runs) and the call's logs are archived before LIMIT seconds (default 585: a device call's 600 s less margin).
# Writes to $OUT (default build/goal-out): summary.txt (what each step printed), goal-<BE>-processes.md (the
# tables), faults.txt, memcheck-gate.txt, rt-run.txt, logs.tgz (every step's folder). COMMIT names the tree in
# summary.txt (the GPU machine's copy has no git history).
set -u
cd "$(dirname "$0")/../.." || exit 1
T0=$(date +%s)
LIMIT=${LIMIT:-585}
O=${OUT:-build/goal-out}
mkdir -p "$O"
S="$O/summary.txt"
left() { echo $((LIMIT - ($(date +%s) - T0))); }
note() { echo "[$(($(date +%s) - T0)) s] $*" | tee -a "$S"; }
archive() { # the steps' folders into logs.tgz, before the call's end
  local dirs=() d
  for d in "$O"/build "$O"/rt "$O"/faults "$O"/goal-*/; do [ -d "$d" ] && dirs+=("$(basename "$d")"); done
  [ ${#dirs[@]} -gt 0 ] && tar czf "$O/logs.tgz" -C "$O" "${dirs[@]}" 2>/dev/null && (cd "$O" && rm -rf "${dirs[@]}")
}
trap archive EXIT
note "start $(date -u) commit ${COMMIT:-?}"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader 2>&1 | tee -a "$S"
if [ ! -x build/processes-bin/ptb-qosd ]; then
  OUT="$O/build" BUILD_ONLY=1 timeout -k 15 240 bash bench/colocate/processes.sh >"$O/build.txt" 2>&1
  note "build rc $?"
fi
if [ -n "${RT:-}" ]; then
  read -r -a rt <<<"$RT"
  OUT="$O/rt" timeout -k 15 150 bash test/gpu/runtime/run_on_gpu.sh "${rt[@]}" >"$O/rt-run.txt" 2>&1
  note "runtime tests rc $?"
  grep -hE '^(PASS|FAIL|SKIP)|rc=' "$O/rt-run.txt" | tail -12 | tee -a "$S"
fi
if [ "${MEMCHECK:-0}" = 1 ]; then
  if [ -x build-rt/test_request_gate ]; then
    timeout -k 15 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 \
      build-rt/test_request_gate >"$O/memcheck-gate.txt" 2>&1
    note "memcheck test_request_gate rc $?"
    tail -3 "$O/memcheck-gate.txt" | tee -a "$S"
  else
    note "memcheck: build-rt/test_request_gate is not built (RT=test_request_gate builds it)"
  fi
fi
if [ "${FAULTS:-0}" = 1 ]; then
  OUT="$O/faults" SKIP_BUILD=1 PART=faults SECS=8 timeout -k 15 200 bash bench/colocate/processes.sh >"$O/faults.txt" 2>&1
  note "faults rc $?"
  grep -E '^(fault|second controller|killed clients):' "$O/faults.txt" | tee -a "$S"
fi
G=${GATES:-"gate --poll-us 5 --between-after-us 100"}
read -r -a bes <<<"${BES:-compute}"
n=${#bes[@]}
refs=() # after the first BE: its LS capacity and LS-alone p99s, for the others (SHARE_LS=0: each measures its own)
for be in "${bes[@]}"; do
  # the time left shared among the BEs still to run, 30 s kept for the archive and a hung step's kill; where a
  # share is too short for a goal row, the first BE takes what is left
  t=$((($(left) - 30) / n))
  # the first of several BEs also measures LS alone, which the others reuse: it takes 3 parts in 2n+1
  [ ${#refs[@]} = 0 ] && [ "$n" -gt 1 ] && [ "${SHARE_LS:-1}" = 1 ] && t=$((($(left) - 30) * 3 / (2 * n + 1)))
  [ "$t" -lt 120 ] && t=$(($(left) - 30))
  n=$((n - 1))
  if [ "$t" -lt 120 ]; then
    note "goal $be: not run (${t} s left for it)"
    continue
  fi
  env "${refs[@]}" OUT="$O/goal-$be" SKIP_BUILD=1 PART=goal BE=$be REQUESTS=${REQUESTS:-20500} TRACE=${TRACE:-0} COLO=0 \
    TWO_BE=0 FAULTS=0 GATES="$G" timeout -k 15 "$t" bash bench/colocate/processes.sh >"$O/goal-$be.txt" 2>&1
  note "goal $be rc $? (limit $t s)"
  if [ ${#refs[@]} = 0 ] && [ "${SHARE_LS:-1}" = 1 ]; then # the later BEs reuse this run's LS alone (processes.sh LS_REFS)
    cap="" p0="" p1=""
    [ -s "$O/goal-$be/ls-refs.txt" ] && read -r cap p0 p1 <"$O/goal-$be/ls-refs.txt"
    if [ -n "$p1" ]; then
      refs=(CAPACITY="$cap" LS_REFS="$p0 $p1")
      note "the later BEs take LS alone from goal $be: capacity $cap, p99 $p0 us (no MPS), $p1 us (MPS)"
    fi
  fi
  grep -E '^row ' "$O/goal-$be.txt" | tee -a "$S"
  cp "$O/goal-$be/processes.md" "$O/goal-$be-processes.md" 2>/dev/null
done
note "end"
