#!/usr/bin/env bash
# The tool's own speed: ptb-transform (parse + analysis + rewrite + output) over `clang -fsyntax-only` on
# the same files, median of repeats, ratio in one run. Two baselines: clang parsing the same single side
# as the tool (the device side for sm_90, same flags), and clang's default CUDA syntax check (host and
# device sides). Runs on the development machine (no GPU needed).
#   bash bench/tool_speed/run.sh [REPEATS] [FILES...]   (default: 5 repeats, test/gpu/*.cu)
set -euo pipefail
cd "$(dirname "$0")/../.."
REPEATS="${1:-5}"; shift || true
FILES=("$@"); [ ${#FILES[@]} -gt 0 ] || FILES=(test/gpu/*.cu)
# A private copy of the tool: a rebuild during the run must not change what is timed.
TOOL="$(mktemp -d)/ptb-transform"; cp build/tools/ptb-transform/ptb-transform "$TOOL"
CLANG=/usr/lib/llvm-19/bin/clang++
CUDA=/usr/local/cuda
STUB="$(mktemp -d)"; touch "$STUB/texture_fetch_functions.h"; trap 'rm -rf "$STUB" "$(dirname "$TOOL")"' EXIT
COMMON=(-fsyntax-only -x cuda --cuda-path=$CUDA -isystem "$STUB" -isystem $CUDA/include/cccl --cuda-gpu-arch=sm_90
        -nocudalib -Wno-unknown-cuda-version -Wno-unknown-attributes -std=c++17 -I test/gpu -w)

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
now() { date +%s.%N; }
time_cmd() {  # prints the median wall seconds of REPEATS runs of "$@"
  for _ in $(seq "$REPEATS"); do
    local t0; t0=$(now); "$@" >/dev/null 2>&1 || true; echo "$(now) - $t0" | bc
  done | median
}

printf "%-34s %8s %8s %8s %7s %7s\n" file tool_s dev_s both_s tool/dev tool/both
tot_t=0; tot_d=0; tot_b=0; n=0; lr_d=0; lr_b=0
for f in "${FILES[@]}"; do
  # Every timed command must succeed: a failure would time an error path.
  "$TOOL" "$f" -o /dev/null -- -std=c++17 -I test/gpu >/dev/null 2>&1 || { echo "ptb-transform failed on $f" >&2; exit 1; }
  "$CLANG" "${COMMON[@]}" --cuda-device-only -Xclang -target-sdk-version=12.5 "$f" || { echo "clang failed on $f" >&2; exit 1; }
  t=$(time_cmd "$TOOL" "$f" -o /dev/null -- -std=c++17 -I test/gpu)
  d=$(time_cmd "$CLANG" "${COMMON[@]}" --cuda-device-only -Xclang -target-sdk-version=12.5 "$f")
  b=$(time_cmd "$CLANG" "${COMMON[@]}" "$f")
  rd=$(echo "$t / $d" | bc -l); rb=$(echo "$t / $b" | bc -l)
  printf "%-34s %8.3f %8.3f %8.3f %7.3f %7.3f\n" "$(basename "$f")" "$t" "$d" "$b" "$rd" "$rb"
  lr_d=$(echo "$lr_d + l($rd)" | bc -l); lr_b=$(echo "$lr_b + l($rb)" | bc -l); n=$((n + 1))
done
printf "geometric mean over %d files: tool/device-side parse %.3f, tool/default syntax check %.3f\n" \
  "$n" "$(echo "e($lr_d / $n)" | bc -l)" "$(echo "e($lr_b / $n)" | bc -l)"
