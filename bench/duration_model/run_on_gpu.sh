#!/usr/bin/env bash
# Duration models on the GPU (issue 17, item 1; docs/design/qos.md, "Duration models"), from the repository root:
#
#   bash bench/duration_model/run_on_gpu.sh [-- duration_model options]
#
# Builds bench/duration_model/duration_model.cu (nvcc -O3 -std=c++17 -arch=sm_90 -I runtime/include;
# nothing generated is needed, nothing to carry) and runs it once. Everything goes to $OUT (default
# build/duration-model-out) as it comes: run.log (all that is printed, the report), launches.tsv (every
# launch: kernel, tasks, %globaltimer ns, event ns, the online prediction before it, the form then).
# GIT_COMMIT, when set, is printed as the commit (the GPU machine's copy may have no .git). Wall clock:
# under a minute (the build ~30 s, the run a few seconds); each step is killed if it overruns (4 minutes
# in all). Last line: duration-model: kernels N median-error X% worst-median Y%
set -u
cd "$(dirname "$0")/../.."
ARGS=()
[ "${1:-}" = "--" ] && { shift; ARGS=("$@"); }
OUT="${OUT:-build/duration-model-out}"
mkdir -p "$OUT"
LOG="$OUT/run.log"
: >"$LOG"
say() { echo "$@" | tee -a "$LOG"; }
. test/gpu/lib.sh
NVCC="$(ptb_nvcc)" || exit 1

say "== duration models (bench/duration_model), $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
say "commit: ${GIT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
say "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null || echo unknown)"
say "nvcc: $("$NVCC" --version | tail -1)"

BIN="build/duration-model-bin"
mkdir -p "$BIN"
if ! timeout 150 "$NVCC" -O3 -std=c++17 -arch=sm_90 -I runtime/include bench/duration_model/duration_model.cu \
    -o "$BIN/duration_model" >"$BIN/build.log" 2>&1; then
  cat "$BIN/build.log" | tee -a "$LOG"
  say "ERROR: the build failed"
  exit 1
fi
say "built $BIN/duration_model"
timeout 80 "$BIN/duration_model" --tsv "$OUT/launches.tsv" "${ARGS[@]}" 2>&1 | tee -a "$LOG"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || say "ERROR: duration_model exited with $rc"
exit "$rc"
