#!/usr/bin/env bash
# stencil2d_chain's twin per launch under the runtime before and after the static first chunks ran their
# blocks cyclically (issue 13, goal 3), and under first-chunk tunings, on the GPU machine (repository root):
#   bash bench/programs/probes/first_chunks.sh BEFORE_RUNTIME_INCLUDE [--reps 7] [--steps 5000] [TRANSFORMED_DIR]
# BEFORE_RUNTIME_INCLUDE: a runtime/include of the commit before (git archive <commit> runtime/include).
# Forms alternate within each repetition; prints each form's median gpu_ms and its cost per launch over the
# original ((form - orig) / launches, in us); every run checks its result against the CPU (FAIL otherwise).
set -u
cd "$(dirname "$0")/../../.."
BEFORE=$1; shift
REPS=7 STEPS=5000 TDIR=build/bench-programs
while [ $# -gt 0 ]; do
  case $1 in --reps) REPS=$2; shift;; --steps) STEPS=$2; shift;; *) TDIR=$1;; esac; shift
done
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
B=build/first-chunks && rm -rf $B && mkdir -p $B
FLAGS=(-std=c++17 -O2 -arch=sm_90 -lineinfo -I bench/programs)
TW=("$TDIR/stencil2d_chain.cu" "$TDIR/stencil2d_chain.twins.cu")
echo "== first_chunks.sh: $(date -u '+%F %T') UTC; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
"$NVCC" "${FLAGS[@]}" bench/programs/stencil2d_chain.cu -o $B/orig &
"$NVCC" "${FLAGS[@]}" -I "$BEFORE" "${TW[@]}" -o $B/before &
"$NVCC" "${FLAGS[@]}" -I runtime/include "${TW[@]}" -o $B/after &
wait
for f in orig before after; do [ -x $B/$f ] || { echo "build of $f failed"; exit 1; }; done
FORMS=(orig before after after-s1c32 after-s2c32 after-s1c32-nocheck before-confined after-confined)
run() {
  local bin env=(PTB_MODE=ptb)
  case $1 in
    orig) bin=$B/orig; env=();;
    before|after) bin=$B/$1;;
    after-s1c32) bin=$B/after; env+=(PTB_FIRST_SHARE=1 PTB_FIRST_CHUNK=32);;
    after-s2c32) bin=$B/after; env+=(PTB_FIRST_SHARE=2 PTB_FIRST_CHUNK=32);;
    after-s1c32-nocheck) bin=$B/after; env+=(PTB_FIRST_SHARE=1 PTB_FIRST_CHUNK=32 PTB_CHECK_CYCLES=1073741824);;
    before-confined) bin=$B/before; env+=(PTB_SMS=0-65);;
    after-confined) bin=$B/after; env+=(PTB_SMS=0-65);;
  esac
  env "${env[@]}" timeout 120 $bin --steps $STEPS | awk '/^PROGRAM/ {print $4} /^FAIL/ {print "FAIL"}'
}
$B/orig --steps 10 >/dev/null
declare -A T
for r in $(seq 1 "$REPS"); do
  forms=("${FORMS[@]}"); [ $((r % 2)) = 0 ] && forms=($(printf '%s\n' "${FORMS[@]}" | tac))
  for f in "${forms[@]}"; do T[$f]+="$(run "$f") "; done
done
med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else print a[int((NR + 1) / 2)]}'; }
o=$(echo "${T[orig]}" | med)
printf '%-22s %10s %10s   %s\n' form median_ms us/launch runs
for f in "${FORMS[@]}"; do
  m=$(echo "${T[$f]}" | med)
  printf '%-22s %10s %10s   %s\n' "$f" "$m" "$(awk -v m="$m" -v o="$o" -v n=$((2 * STEPS)) 'BEGIN {printf "%+.2f", (m - o) * 1000 / n}')" "${T[$f]}"
done
