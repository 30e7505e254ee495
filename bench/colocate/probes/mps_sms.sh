#!/usr/bin/env bash
# On the GPU machine, repository root: which SMs an MPS client gets at each CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
# (probes/mps_sms.cu), each percentage in two processes one after the other, and one process at PCT_BUSY (default
# 94) while a second client at 100% runs beside it. Writes to $OUT (default build/mps-sms-out)/mps_sms.txt.
#   PCTS="100 97 94 88 75 50 25" bash bench/colocate/probes/mps_sms.sh
set -u
cd "$(dirname "$0")/../../.." || exit 1
O=${OUT:-build/mps-sms-out}
mkdir -p "$O" build
nvcc -std=c++17 -O2 -arch=sm_90 -o build/mps_sms bench/colocate/probes/mps_sms.cu || exit 1
export CUDA_MPS_PIPE_DIRECTORY="$(mktemp -d)" CUDA_MPS_LOG_DIRECTORY="$(mktemp -d)"
nvidia-cuda-mps-control -d || { echo "mps_sms.sh: the MPS daemon did not start"; exit 1; }
trap 'echo quit | nvidia-cuda-mps-control' EXIT
{
  date -u; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
  for pct in ${PCTS:-100 97 94 88 75 50 25}; do
    for proc in 1 2; do
      echo "== ${pct}% process $proc"
      CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct build/mps_sms 3
    done
  done
  echo "== ${PCT_BUSY:-94}% beside a client at 100%"
  build/mps_sms 40 >"$O/beside.txt" & b=$!
  sleep 0.3
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=${PCT_BUSY:-94} build/mps_sms 3
  wait $b; echo "(the 100% client: $(tail -1 "$O/beside.txt"))"
} 2>&1 | tee "$O/mps_sms.txt"
