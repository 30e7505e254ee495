#!/usr/bin/env bash
# The request gate with two versions of its header, on one GPU machine in one call (repository root; carry
# build/bench-colocate and .device-carry/oldgate):
#
#   bash bench/colocate/gate_ab.sh [ROUNDS]
#
# A: runtime/include/ptb/qos/request_gate.cuh as in this tree. B: .device-carry/oldgate/ptb/, a copy of this
# tree's runtime/include/ptb with another request_gate.cuh (its includes are relative), e.g.
#   mkdir -p .device-carry/oldgate && cp -r runtime/include/ptb .device-carry/oldgate/ &&
#   git show 3090cd1:runtime/include/ptb/qos/request_gate.cuh > .device-carry/oldgate/ptb/qos/request_gate.cuh
# (3090cd1: the gate that applied BE's state under its own lock).
# Builds bench/colocate twice (run_on_gpu.sh --build-only, with PTB_RUNTIME_INCLUDE=.device-carry/oldgate for B), then runs
# A, B, A, B, ... (ROUNDS each, default 2), each a whole process: `--be memory,wmma --loads 0.5 --configs
# gate --reps 5 --secs 2 --no-trace` (every ratio within its own process, against its own LS solo). Prints
# each run's LS solo line, its gate rows and the LS client's wait in begin(). Output in $OUT (default
# build/gate-ab-out): gate-ab.txt, and each run's colocate.md as run<k>-<A|B>.md.
set -u
cd "$(dirname "$0")/../.."
ROUNDS=${1:-2}
TDIR=build/bench-colocate
OLD=.device-carry/oldgate
OUT="${OUT:-build/gate-ab-out}"
mkdir -p "$OUT"
[ -f "$OLD/ptb/qos/request_gate.cuh" ] || { echo "ERROR: $OLD/ptb/qos/request_gate.cuh is missing" >&2; exit 2; }
[ -f "$TDIR/be_programs.cu" ] || { echo "ERROR: $TDIR is missing (bench/colocate/transform.sh)" >&2; exit 2; }
REP="$OUT/gate-ab.txt"
: >"$REP"
say() { echo "$@" | tee -a "$REP"; }
say "== $(date -u '+%F %T') UTC; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
say "== B's gate header: sha256 $(sha256sum "$OLD/ptb/qos/request_gate.cuh" | cut -c1-16)"
# the same build as run_on_gpu.sh, once against each runtime include folder
bash bench/colocate/run_on_gpu.sh --build-only build/gate-ab-A "$TDIR" >/dev/null || { say "BUILD FAILED (A)"; exit 1; }
PTB_RUNTIME_INCLUDE="$OLD" bash bench/colocate/run_on_gpu.sh --build-only build/gate-ab-B "$TDIR" >/dev/null ||
  { say "BUILD FAILED (B)"; exit 1; }
export CUDA_MODULE_LOADING=EAGER
k=0
for r in $(seq 1 "$ROUNDS"); do
  for v in A B; do
    k=$((k + 1))
    d=$(mktemp -d)
    timeout -s KILL 200 "build/gate-ab-$v/colocate" --out "$d" --be memory,wmma --loads 0.5 --configs gate --reps 5 \
      --secs 2 --no-trace >"$d/stdout.txt" 2>&1
    say "-- run $k ($v), exit $?"
    say "   solo: $(grep -A3 '^LS solo' "$d/colocate.md" | tail -1)"
    grep '^| [a-z]* | 50% | gate ' "$d/colocate.md" | sed 's/^/   /' | tee -a "$REP"
    grep -o 'waited in begin() .*' "$d/stdout.txt" | sed 's/^/   /' | tee -a "$REP"
    cp "$d/colocate.md" "$OUT/run$k-$v.md"
  done
done
