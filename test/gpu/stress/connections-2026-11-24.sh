#!/bin/bash
# The runs behind docs/runtime.md, "Resume workers behind a user's kernel" (H100, 2026-11-24): the runtime
# asks for 32 hardware queues (detail/connections.cuh). Replays of the two graph cases that were over the
# bound at b6ea3eb (default now, and with the user's CUDA_DEVICE_MAX_CONNECTIONS=1, which the runtime keeps);
# the stress test on the four seeds that failed on 2026-11-23 and four fresh ones; the runtime's tests; the
# first-launch and per-launch programs of bench/programs (needs build/bench-programs). Outputs in $OUT (all.tgz).
# Run at aa744e1 (defaults), then with REPLAYS=24 and SEEDS naming the seeds of the runs before it at
# cd5e4db, c82a3c5, 7050813, a77267b and bac2ca9 (each folder's stress-*.txt names them).
REPLAYS=${REPLAYS:-16}
SEEDS=${SEEDS:-"10137568575016041117 13151873796227903726 3803700800283139141 4477128606541723795 fresh fresh fresh fresh"}
set -u
O=${OUT:-out}; mkdir -p "$O" build-stress
N=${NVCC:-/usr/local/cuda/bin/nvcc}
F="-std=c++17 -arch=sm_90 -O2 -lineinfo -I runtime/include"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; $N --version | tail -1; } > "$O/when.txt"
$N $F test/gpu/stress/stress.cu -o build-stress/stress &
for t in test_host test_policy test_basic; do $N $F -I test/gpu/runtime test/gpu/runtime/$t.cu -o build-stress/$t & done
wait
for t in test_host test_policy test_basic; do echo "== $t"; timeout -s KILL 120 build-stress/$t 2>&1 | tail -3; done > "$O/runtime-tests.txt"
replay() {  # replay <seed> <times> <env>
  for r in $(seq "$2"); do
    echo "== $1 $3 $r"; env $3 timeout -s KILL 60 build-stress/stress --seed "$1" --cases 1 --min-launches 1 | grep -E "^FAIL|^case" | sed 's/|.*|/| SET |/'
  done
}
{ replay 10523739377958258358 $REPLAYS X=1; replay 10493520169583400443 8 X=1; replay 10493520169583400443 4 CUDA_DEVICE_MAX_CONNECTIONS=1; } > "$O/graph-replays.txt" 2>&1
for s in $SEEDS; do
  a=(); [ "$s" != fresh ] && a=(--seed "$s")
  timeout -s KILL 120 build-stress/stress "${a[@]}" > "$O/run.txt" 2>&1; echo "rc=$?" >> "$O/run.txt"
  seed=$(grep -m1 "^SEED" "$O/run.txt" | awk '{print $3}'); mv "$O/run.txt" "$O/stress-$seed.txt"
done
date -u >> "$O/when.txt"
mkdir -p "$O/programs"; BUDGET_S=90 OUT=$O/programs timeout -s KILL 150 bash bench/programs/run_on_gpu.sh --reps 5 --only 'sobel_once|stencil2d_chain' build/bench-programs > /dev/null 2>&1
date -u >> "$O/when.txt"
(cd "$O" && tar czf all.tgz --exclude all.tgz . )
