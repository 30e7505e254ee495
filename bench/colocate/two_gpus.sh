#!/usr/bin/env bash
# Several GPUs (issue 40): one ptb-qosd per GPU, one LS + BE pair per GPU, all at once. On a machine with two
# GPUs or more, from the repository root, with build/bench-colocate (bench/colocate/transform.sh) carried:
#
#   bash bench/colocate/two_gpus.sh [TRANSFORMED_DIR]
#
# As on a node: one MPS daemon serves every GPU and every GPU's segment lies in one folder (PTB_QOSD_DIR), each
# named by its GPU's UUID. processes.sh then runs once per GPU (DEVICE=0 and DEVICE=1; PART=goal, the goal's
# gate only, SECS=47, TWO_BE=0, COLO=0 unless set), concurrently, each with its own controller and processes.
# Each GPU's table must meet the goal on its own, and each controller must serve only its GPU's processes:
# its status 10 s into the gate row lists one LS and one BE process (checked here). Output: $OUT/gpu0,
# $OUT/gpu1, $OUT/two_gpus.md.
set -u
cd "$(dirname "$0")/../.."
TDIR="${1:-build/bench-colocate}"
OUT="${OUT:-build/two-gpus-out}"
mkdir -p "$OUT"
n=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | wc -l)
[ "$n" -ge 2 ] || { echo "two_gpus: this machine has $n GPU(s); two are needed"; exit 1; }
export CUDA_DEVICE_ORDER=PCI_BUS_ID # CUDA's device N is nvidia-smi's GPU N
# Build once (both runs would otherwise build into the same folder at the same time).
BUILD_ONLY=1 OUT="$OUT/build" bash bench/colocate/processes.sh "$TDIR" >"$OUT/build.log" 2>&1 || { tail "$OUT/build.log"; exit 1; }
export CUDA_MPS_PIPE_DIRECTORY="$(mktemp -d)" CUDA_MPS_LOG_DIRECTORY="$(mktemp -d)"
export PTB_QOSD_DIR="$(mktemp -d -p /dev/shm)"
nvidia-cuda-mps-control -d || { echo "two_gpus: the MPS daemon did not start"; exit 1; }
trap 'echo quit | nvidia-cuda-mps-control' EXIT
GATE="${GATES:-gate --poll-us 5 --between-after-us 100}"
# Each GPU's capacity measured in turn, nothing else running: measured at the same time, each run's start lowered
# the other's (906 and 941 requests/s against 1,043-1,057 alone, H200 x2, 2026-11-29)
for d in 0 1; do
  cap[$d]=$(CUDA_VISIBLE_DEVICES=$d timeout 120 python3 bench/colocate/ls_torch.py --model "${MODEL:-resnet50}" ${EAGER:+--eager} \
    --capacity | awk '/^TORCH capacity/ {print $3}')
  echo "two_gpus: GPU $d capacity ${cap[$d]:-?} requests/s"
done
for d in 0 1; do
  env SKIP_BUILD=1 ${cap[$d]:+CAPACITY=${cap[$d]}} DEVICE=$d MPS_EXTERNAL=1 PART="${PART:-goal}" SECS="${SECS:-47}" GATES="$GATE" STATUS_MID=1 \
    TWO_BE="${TWO_BE:-0}" COLO="${COLO:-0}" OUT="$OUT/gpu$d" bash bench/colocate/processes.sh "$TDIR" >"$OUT/gpu$d.log" 2>&1 &
  pids[$d]=$!
done
rc=0
for d in 0 1; do wait "${pids[$d]}" || rc=1; done
{
  echo "# Two GPUs at once, $(date -u +%F)"
  echo
  echo "Segments in one folder: $(ls "$PTB_QOSD_DIR" | tr '\n' ' ')"
  for d in 0 1; do
    echo; echo "## GPU $d: $(nvidia-smi -i $d --query-gpu=name,uuid --format=csv,noheader)"; echo
    cat "$OUT/gpu$d/processes.md" 2>/dev/null || echo "(no table: see gpu$d.log)"
    uuid=$(nvidia-smi -i $d --query-gpu=uuid --format=csv,noheader)
    for f in "$OUT/gpu$d"/qosd-*.status.txt; do
      [ -s "$f" ] || continue
      be=$(grep -c "^    BE pid" "$f") ls=$(grep -c "^    LS pid" "$f")
      echo; echo "Status 10 s into $(basename "$f" .status.txt): $be BE and $ls LS process(es)"
      if ! grep -q "^$uuid:" "$f" || [ "$be" != 1 ] || [ "$ls" != 1 ]; then
        echo "NOT APART: GPU $d's controller should serve exactly one BE and one LS process of GPU $uuid"; rc=1
      fi
      echo; sed 's/^/    /' "$f"
    done
  done
} >"$OUT/two_gpus.md"
cat "$OUT/two_gpus.md"
exit $rc
