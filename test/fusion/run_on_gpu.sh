#!/usr/bin/env bash
# On the GPU machine: builds test/fusion/fusion_pair.cu once per pair against the outputs of
# test/fusion/transform.sh, runs the bit-identity checks, and with --bench times every ratio.
#   bash test/fusion/run_on_gpu.sh [--bench] [--only PAIR_REGEX] [GENERATED_DIR] [-- harness args]
# Without a GPU (CI) use --compile-only: builds every pair and runs nothing.
set -uo pipefail
cd "$(dirname "$0")/../.."
NVCC="${NVCC:-nvcc}"
command -v "$NVCC" >/dev/null || NVCC=/usr/local/cuda/bin/nvcc
BENCH=""; ONLY="."; COMPILE_ONLY=0; GEN=build/fusion-generated; EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bench) BENCH=--bench ;;
    --only) ONLY="$2"; shift ;;
    --compile-only) COMPILE_ONLY=1 ;;
    --) shift; EXTRA=("$@"); break ;;
    *) GEN="$1" ;;
  esac
  shift
done
BIN="${GEN}-bin"
mkdir -p "$BIN"
C=test/fusion/corpus
pass=0; fail=0
build() {  # pair pa ka fa pb kb fb
  "$NVCC" -arch=sm_90 -std=c++17 -O3 -lineinfo -I runtime/include -I "$C" -I "$GEN" \
    -DFUSED_SOURCE="\"$1.cu\"" -DPROBLEM_A="$2" -DPROBLEM_B="$5" -DKERNEL_A="$3" -DKERNEL_B="$6" \
    -DPROBLEM_A_HEADER="\"${4}_problem.cuh\"" -DPROBLEM_B_HEADER="\"${7}_problem.cuh\"" \
    test/fusion/fusion_pair.cu -o "$BIN/$1" >"$BIN/$1.build.log" 2>&1
}
# Build every pair at once (they are independent), then run them one at a time.
pids=()
while read -r pair pa ka fa pb kb fb sa sb; do
  echo "$pair" | grep -Eq "$ONLY" || continue
  rm -f "$BIN/$pair"
  build "$pair" "$pa" "$ka" "$fa" "$pb" "$kb" "$fb" &
  pids+=($!)
done <"$GEN/pairs.list"
for p in "${pids[@]}"; do wait "$p"; done
while read -r pair pa ka fa pb kb fb sa sb; do
  echo "$pair" | grep -Eq "$ONLY" || continue
  if [ ! -x "$BIN/$pair" ]; then echo "$pair: BUILD FAILED"; cat "$BIN/$pair.build.log"; fail=$((fail + 1)); continue; fi
  if [ "$COMPILE_ONLY" = 1 ]; then echo "$pair: built"; pass=$((pass + 1)); continue; fi
  if timeout 300 "$BIN/$pair" --scale-a "$sa" --scale-b "$sb" $BENCH "${EXTRA[@]}"; then pass=$((pass + 1)); else echo "$pair: FAILED"; fail=$((fail + 1)); fi
done <"$GEN/pairs.list"
echo "fusion pairs: $pass passed, $fail failed"
[ "$fail" = 0 ]
