#!/usr/bin/env bash
# Several GPUs (issue 40): one ptb-qosd per GPU, one LS + BE pair per GPU, all at once. On a machine with two
# GPUs or more, from the repository root, with build/bench-colocate (bench/colocate/transform.sh) carried:
#
#   bash bench/colocate/two_gpus.sh [TRANSFORMED_DIR]
#
# One MPS daemon serves every GPU (as on a node); processes.sh then runs once per GPU (DEVICE=0 and DEVICE=1,
# PART=goal, TWO_BE=0, COLO=0 unless set), concurrently, each with its own controller, segment folder and
# processes. Each GPU's table must meet its goal on its own; the runs must not see each other's processes
# (each status lists one LS and one BE process at most). Output: $OUT/gpu0, $OUT/gpu1, $OUT/two_gpus.md.
set -u
cd "$(dirname "$0")/../.."
TDIR="${1:-build/bench-colocate}"
OUT="${OUT:-build/two-gpus-out}"
mkdir -p "$OUT"
n=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | wc -l)
[ "$n" -ge 2 ] || { echo "two_gpus: this machine has $n GPU(s); two are needed"; exit 1; }
# Build once (both runs would otherwise build into the same folder at the same time).
BUILD_ONLY=1 OUT="$OUT/build" bash bench/colocate/processes.sh "$TDIR" >"$OUT/build.log" 2>&1 || { tail "$OUT/build.log"; exit 1; }
export CUDA_MPS_PIPE_DIRECTORY="$(mktemp -d)" CUDA_MPS_LOG_DIRECTORY="$(mktemp -d)"
nvidia-cuda-mps-control -d || { echo "two_gpus: the MPS daemon did not start"; exit 1; }
trap 'echo quit | nvidia-cuda-mps-control' EXIT
for d in 0 1; do
  env SKIP_BUILD=1 DEVICE=$d MPS_EXTERNAL=1 PART="${PART:-goal}" TWO_BE="${TWO_BE:-0}" COLO="${COLO:-0}" OUT="$OUT/gpu$d" \
    bash bench/colocate/processes.sh "$TDIR" >"$OUT/gpu$d.log" 2>&1 &
  pids[$d]=$!
done
rc=0
for d in 0 1; do wait "${pids[$d]}" || rc=1; done
{
  echo "# Two GPUs at once, $(date -u +%F)"
  for d in 0 1; do
    echo; echo "## GPU $d: $(nvidia-smi -i $d --query-gpu=name,uuid --format=csv,noheader)"; echo
    cat "$OUT/gpu$d/processes.md" 2>/dev/null || echo "(no table: see gpu$d.log)"
  done
} >"$OUT/two_gpus.md"
cat "$OUT/two_gpus.md"
exit $rc
