#!/bin/bash
# The closing runs of docs/runtime.md, "Resume workers behind a user's kernel" (H100, 2026-11-24): the
# transformed corpus (both forms, then confined to five policies); compute-sanitizer (memcheck, racecheck,
# synccheck) on the stress test, the wavefront and the corpus's multi-stream and graph programs, confined;
# the stress test (fresh seeds) and replays of its worst graph case; the first-launch and per-launch
# programs of bench/programs. (At 88f4c5e, whose runtime asked for 32 hardware queues in every process, the
# programs part ran the transformed programs with 32 and then with CUDA_DEVICE_MAX_CONNECTIONS=8.)
# PARTS picks parts (default all: "corpus confined sanitize stress programs"; one device call does not hold
# them all). The stress part runs the stress test once per seed in SEEDS ("fresh": a new seed; default three
# fresh ones), then REPLAYS (default 12) replays of each graph case in GRAPH_SEEDS (default the worst one,
# 10523739377958258358). The sanitize part takes SAN_TOOLS, SAN_PROGRAMS and SAN_TIMEOUT (per run, default
# 120 s) of confine_and_sanitize.sh. Needs build/gpu-transformed (test/gpu/transform.sh) and build/bench-programs. Outputs in $OUT
# (all.tgz, written again after each part).
set -u
O=${OUT:-out}; mkdir -p "$O/corpus" "$O/programs" build-stress
PARTS=${PARTS:-"corpus confined sanitize stress programs"}
SEEDS=${SEEDS:-"fresh fresh fresh"}
REPLAYS=${REPLAYS:-12}
GRAPH_SEEDS=${GRAPH_SEEDS:-10523739377958258358}
has() { [[ " $PARTS " == *" $1 "* ]]; }
pack() { (cd "$O" && tar czf /tmp/all.tgz --exclude all.tgz . && mv /tmp/all.tgz all.tgz); }
N=${NVCC:-/usr/local/cuda/bin/nvcc}
F="-std=c++17 -arch=sm_90 -O2 -lineinfo -I runtime/include"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "parts: $PARTS"; echo "commit: ${COMMIT:-?}"; } > "$O/when.txt"
if has sanitize || has stress; then
  $N $F test/gpu/stress/stress.cu -o build-stress/stress & $N $F test/gpu/stress/wavefront.cu -o build-stress/wavefront & wait
fi
if has corpus; then
  OUT=$O/corpus timeout -s KILL 240 bash test/gpu/run_on_gpu.sh build/gpu-transformed > "$O/corpus.txt" 2>&1
  echo "corpus rc=$? $(date -u +%T)" >> "$O/when.txt"; pack
fi
if has confined; then
  OUT=$O timeout -s KILL 480 bash test/gpu/stress/confine_and_sanitize.sh --confine-only --jobs 8 > "$O/confined.txt" 2>&1
  echo "confined rc=$? $(date -u +%T)" >> "$O/when.txt"; mv "$O/confine-sanitize.txt" "$O/confined-runs.txt" 2>/dev/null; pack
fi
if has sanitize; then
  ST=${SAN_TIMEOUT:-120}
  SAN_PROGRAMS=${SAN_PROGRAMS:-"stress|wavefront|multi_stream_concurrent|launch_shapes_streams|graph_capture"} SAN_TIMEOUT=$ST OUT=$O \
    timeout -s KILL $((ST + 80)) bash test/gpu/stress/confine_and_sanitize.sh --sanitize-only --jobs 8 > "$O/sanitize.txt" 2>&1
  echo "sanitize rc=$? $(date -u +%T)" >> "$O/when.txt"; pack
fi
if has stress; then
  for seed in $SEEDS; do
    a=(); [ "$seed" != fresh ] && a=(--seed "$seed")
    timeout -s KILL 300 build-stress/stress "${a[@]}" > "$O/run.txt" 2>&1; echo "rc=$?" >> "$O/run.txt"
    mv "$O/run.txt" "$O/stress-$(grep -m1 "^SEED" "$O/run.txt" | awk '{print $3}').txt"
  done
  for g in $GRAPH_SEEDS; do
    for r in $(seq "$REPLAYS"); do
      timeout -s KILL 60 build-stress/stress --seed "$g" --cases 1 --min-launches 1 | grep -E "^case" | sed 's/|.*|/| SET |/'
    done
  done > "$O/graph-replays.txt" 2>&1
  echo "stress $(date -u +%T)" >> "$O/when.txt"; pack
fi
if has programs; then
  BUDGET_S=50 OUT=$O/programs timeout -s KILL 90 bash bench/programs/run_on_gpu.sh --reps 5 --only 'sobel_once|stencil2d_chain' build/bench-programs > /dev/null 2>&1
  echo "programs $(date -u +%T)" >> "$O/when.txt"; pack
fi
