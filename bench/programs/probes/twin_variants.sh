#!/usr/bin/env bash
# The twins of bench/programs (PTB_MODE=ptb: every launch a twin, all SMs) under the runtime before and
# after a change and under tunings, as whole programs (issue 13, goals 3 and 4 for twins), on the GPU
# machine (repository root):
#   bash bench/programs/probes/twin_variants.sh BEFORE_RUNTIME_INCLUDE [--reps 5] [TRANSFORMED_DIR]
# BEFORE_RUNTIME_INCLUDE: a runtime/include of the commit before (git archive <commit> runtime/include).
# Forms: FORMS (default below), each `name:build:VAR=value,...` (build: orig, before, after, or a name
# from BUILDS). BUILDS: more runtimes to build with, each `name=RUNTIME_INCLUDE`. PROGS: the programs
# (default every bench/programs/*.cu). Forms alternate within each repetition. Prints per program the median gpu_ms of each form over the original's,
# the geometric mean per form, and stencil2d_chain's cost per launch ((form - orig) / launches, us). Every
# run checks its result against the CPU (a FAIL is printed as such and ends the script's status at 1).
set -u
cd "$(dirname "$0")/../../.."
. bench/programs/script_lib.sh
BEFORE=$1; shift
REPS=5 TDIR=build/bench-programs
while [ $# -gt 0 ]; do
  case $1 in --reps) REPS=$2; shift;; *) TDIR=$1;; esac; shift
done
FORMS=(${FORMS:-orig:orig: before:before: after:after: after-s1c32:after:PTB_FIRST_SHARE=1,PTB_FIRST_CHUNK=32 after-s2c32:after:PTB_FIRST_SHARE=2,PTB_FIRST_CHUNK=32 before-confined:before:PTB_SMS=0-65 after-confined:after:PTB_SMS=0-65})
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
B=build/twin-variants && rm -rf $B && mkdir -p $B
FLAGS=(-std=c++17 -O2 -arch=sm_90 -lineinfo -I bench/programs)
echo "== twin_variants.sh: $(date -u '+%F %T') UTC; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
RUNTIMES=("before=$BEFORE" "after=runtime/include" ${BUILDS:-})
PROGS=(${PROGS:-$(for src in bench/programs/*.cu; do basename "$src" .cu; done)})
for n in "${PROGS[@]}"; do
  mapfile -t tw < <(transformed_sources "$TDIR" "$n")
  "$NVCC" "${FLAGS[@]}" "bench/programs/$n.cu" -o $B/$n.orig &
  for rtb in "${RUNTIMES[@]}"; do "$NVCC" "${FLAGS[@]}" -I "${rtb#*=}" "${tw[@]}" -o "$B/$n.${rtb%%=*}" & done
done
wait
status=0
for n in "${PROGS[@]}"; do for b in orig "${RUNTIMES[@]}"; do [ -x "$B/$n.${b%%=*}" ] || { echo "build of $n.${b%%=*} failed"; status=1; }; done; done
declare -A T
run() {  # run <program> <form spec>
  local name=${2%%:*} rest=${2#*:}; local build=${rest%%:*} vars=${rest#*:}
  local env=(); [ "$build" != orig ] && env=(PTB_MODE=ptb)
  [ -n "$vars" ] && IFS=, read -r -a more <<<"$vars" && env+=("${more[@]}")
  local args=(); [ "$1" = stencil2d_chain ] && args=(--steps 2000)
  env ${env[@]+"${env[@]}"} timeout 60 $B/$1.$build ${args[@]+"${args[@]}"} | awk '/^PROGRAM/ {print $4} /^FAIL/ {print "FAIL"}'
}
for n in "${PROGS[@]}"; do $B/$n.orig >/dev/null 2>&1; done  # warm-up
for r in $(seq 1 "$REPS"); do
  for n in "${PROGS[@]}"; do
    forms=("${FORMS[@]}"); [ $((r % 2)) = 0 ] && forms=($(printf '%s\n' "${FORMS[@]}" | tac))
    for f in "${forms[@]}"; do
      v=$(run "$n" "$f"); [ "$v" = FAIL ] || [ -z "$v" ] && { echo "FAIL $n ${f%%:*} (run $r)"; status=1; v=nan; }
      T["$n ${f%%:*}"]+="$v "
    done
  done
done
printf '%-16s' program; for f in "${FORMS[@]}"; do printf ' %14s' "${f%%:*}"; done; echo
declare -A G
for n in "${PROGS[@]}"; do
  o=$(echo "${T[$n orig]}" | median)
  printf '%-16s' "$n"
  for f in "${FORMS[@]}"; do
    m=$(echo "${T[$n ${f%%:*}]}" | median)
    if [ "${f%%:*}" = orig ]; then printf ' %12s ms' "$o"; else
      x=$(awk -v m="$m" -v o="$o" 'BEGIN {printf "%.4f", m / o}'); printf ' %14s' "$x"; G[${f%%:*}]+="$x "; fi
  done
  echo
done
printf '%-16s %14s' geomean ""; for f in "${FORMS[@]:1}"; do
  printf ' %14s' "$(echo "${G[${f%%:*}]}" | tr ' ' '\n' | grep -v '^$' | awk '{s += log($1)} END {printf "%.4f", exp(s / NR)}')"; done; echo
o=$(echo "${T[stencil2d_chain orig]}" | median)
printf '%-16s %14s' "per-launch us" ""; for f in "${FORMS[@]:1}"; do
  m=$(echo "${T[stencil2d_chain ${f%%:*}]}" | median); printf ' %14s' "$(awk -v m="$m" -v o="$o" 'BEGIN {printf "%+.2f", (m - o) * 1000 / 4000}')"; done; echo
echo "== raw"; for k in "${!T[@]}"; do echo "$k: ${T[$k]}"; done | sort
exit $status
