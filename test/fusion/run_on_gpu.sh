#!/usr/bin/env bash
# On the GPU machine: builds tools/fuse-kernels/tuner/fusion_tuner.cu once per pair against the outputs of
# test/fusion/transform.sh (and once more against <pair>.decided.cu, the decision launcher, where there is
# one), runs the bit-identity checks at each of the pair's problem sizes (the scales column of pairs.txt),
# and with --bench times every ratio and prints the decision per size.
#   bash test/fusion/run_on_gpu.sh [--bench] [--only PAIR_REGEX] [--scales S,S,...] [GENERATED_DIR] [-- harness args]
# --scales replaces every pair's list (e.g. --scales 1). FUSION_DEADLINE (seconds since the epoch): no pair
# starts after it, and each gets at most the time left (else 300 s).
# Without a GPU (CI) use --compile-only: builds every pair and runs nothing.
# Register budgets: where transform.sh wrote <pair>.budget.cu (the pair's candidates plus those with
# register budgets), that output is built with -arch=sm_90a (setmaxnreg) and -Xptxas -v, and runs in place
# of <pair>.cu; a build whose ptxas says it ignored or refused setmaxnreg (C7508, C7406, ...) fails.
# DECIDED_ONLY=1 builds and runs only the decision launchers (<pair>.decided.cu; those whose decisions name
# budgeted candidates are built for sm_90a). FUSION_BUDGETS=0 runs <pair>.cu instead. The pairs matching BUDGET_PLAIN (default gemm_stencil|gemm_coulomb)
# also build <pair>.budget.cu for plain sm_90 (no setmaxnreg) and check it at one size (BUDGET_PLAIN_SCALE,
# default 0.3), without timing.
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/gpu/lib.sh
NVCC="$(ptb_nvcc)" || exit 1
BENCH=""; ONLY="."; COMPILE_ONLY=0; GEN=build/fusion-generated; EXTRA=(); SCALES=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bench) BENCH=--bench ;;
    --only) ONLY="$2"; shift ;;
    --scales) SCALES="$2"; shift ;;
    --compile-only) COMPILE_ONLY=1 ;;
    --) shift; EXTRA=("$@"); break ;;
    *) GEN="$1" ;;
  esac
  shift
done
BIN="${GEN}-bin"
mkdir -p "$BIN"
C=test/fusion/corpus
pass=0; fail=0; skipped=0
BUDGETS="${FUSION_BUDGETS:-1}"
BUDGET_PLAIN="${BUDGET_PLAIN:-gemm_stencil|gemm_coulomb}"
build() {  # output source pair pa ka fa pb kb fb [extra flags]
  local out="$1" src="$2" arch=sm_90; shift 2
  # budget outputs, and decision launchers whose decisions name budgeted candidates (`@`), are for sm_90a
  case "$src" in *.budget.cu) case "$out" in *-sm90) ;; *) arch=sm_90a ;; esac ;; esac
  case "$src" in *.decided.cu) grep -q '^// Register budgets' "$GEN/$src" && arch=sm_90a ;; esac
  "$NVCC" -arch=$arch -std=c++17 -O3 -lineinfo -I runtime/include -I "$C" -I "$GEN" \
    -DFUSED_SOURCE="\"$src\"" -DPROBLEM_A="$2" -DPROBLEM_B="$5" -DKERNEL_A="$3" -DKERNEL_B="$6" \
    -DPROBLEM_A_HEADER="\"${4}_problem.cuh\"" -DPROBLEM_B_HEADER="\"${7}_problem.cuh\"" "${@:8}" \
    $([ "$arch" = sm_90a ] && echo -Xptxas -v) tools/fuse-kernels/tuner/fusion_tuner.cu -o "$out" >"$out.build.log" 2>&1 || return 1
  # setmaxnreg ignored (no register count at entry) or refused: the budgets would not be what was asked.
  if [ "$arch" = sm_90a ] && grep -Eq "\(C7[0-9]+\).*setmaxnreg" "$out.build.log"; then
    grep -E "\(C7[0-9]+\).*setmaxnreg" "$out.build.log" | sort | uniq -c >&2
    rm -f "$out"
    return 1
  fi
}
has_budgets() { [ "$BUDGETS" != 0 ] && [ -f "$GEN/$1.budget.cu" ]; }
budget_plain() { echo "$1" | grep -Eq "^($BUDGET_PLAIN)\$"; }
# --compile-only: <pair>.cu need not be built on its own where <pair>.budget.cu is built for plain sm_90
# (BUDGET_PLAIN) and holds every line of <pair>.cu, in order (transform.sh only inserts the budgeted
# candidates, their launchers and their table rows): that build compiles <pair>.cu's code, with the same
# flags and target. Checked here with diff; where a line of <pair>.cu is missing, <pair>.cu is built.
# On the CI subset (transform.sh --subset wrote GEN/SUBSET) the sm_90a build of <pair>.budget.cu covers it
# too: the same code, compiled for sm_90a (its cicc runs for compute_90 as well); the BUDGET_PLAIN pairs
# keep the plain sm_90 build of those lines.
covered_by_budget_plain() {
  [ "$COMPILE_ONLY" = 1 ] && has_budgets "$1" && { budget_plain "$1" || [ -f "$GEN/SUBSET" ]; } &&
    ! diff "$GEN/$1.cu" "$GEN/$1.budget.cu" | grep -q '^<'
}
# Build the pairs in parallel (they are independent), at most JOBS at once (default: the number of cores;
# more only share the cores and the caches), then run them one at a time.
JOBS="${JOBS:-$(nproc)}"
spawn() {
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  build "$@" &
}
while read -r pair pa ka fa pb kb fb sa sb sc; do
  echo "$pair" | grep -Eq "$ONLY" || continue
  rm -f "$BIN/$pair" "$BIN/$pair.decided" "$BIN/$pair.budget" "$BIN/$pair.budget-sm90"
  if [ "${DECIDED_ONLY:-0}" = 1 ]; then :
  elif covered_by_budget_plain "$pair"; then :
  elif ! has_budgets "$pair" || [ "$COMPILE_ONLY" = 1 ]; then
    spawn "$BIN/$pair" "$pair.cu" "$pair" "$pa" "$ka" "$fa" "$pb" "$kb" "$fb"
  fi
  if [ "${DECIDED_ONLY:-0}" != 1 ] && has_budgets "$pair"; then
    spawn "$BIN/$pair.budget" "$pair.budget.cu" "$pair" "$pa" "$ka" "$fa" "$pb" "$kb" "$fb"
    if budget_plain "$pair"; then
      spawn "$BIN/$pair.budget-sm90" "$pair.budget.cu" "$pair" "$pa" "$ka" "$fa" "$pb" "$kb" "$fb"
    fi
  fi
  if [ -f "$GEN/$pair.decided.cu" ]; then
    spawn "$BIN/$pair.decided" "$pair.decided.cu" "$pair" "$pa" "$ka" "$fa" "$pb" "$kb" "$fb" -DFUSED_DECISIONS
  fi
done <"$GEN/pairs.list"
wait
run() {  # name binary scale_a scale_b scales [--check-only]
  local name="$1" bin="$2" limit=300 bench="$BENCH"
  [ "${6:-}" = --check-only ] && bench=""
  if [ ! -x "$bin" ]; then echo "$name: BUILD FAILED"; cat "$bin.build.log"; fail=$((fail + 1)); return; fi
  if [ "$COMPILE_ONLY" = 1 ]; then echo "$name: built"; pass=$((pass + 1)); return; fi
  if [ -n "${FUSION_DEADLINE:-}" ]; then
    limit=$((FUSION_DEADLINE - $(date +%s)))
    if [ "$limit" -lt 10 ]; then echo "$name: SKIPPED (no time left)"; skipped=$((skipped + 1)); return; fi
    [ "$limit" -gt 300 ] && limit=300
  fi
  local t0; t0=$(date +%s)
  timeout "$limit" "$bin" --scale-a "$3" --scale-b "$4" --scales "$5" $bench "${EXTRA[@]}"
  local rc=$?
  if [ "$rc" = 0 ]; then pass=$((pass + 1)); echo "$name: passed in $(( $(date +%s) - t0 )) s"
  elif [ "$rc" = 124 ]; then echo "$name: FAILED (timed out after $limit s)"; fail=$((fail + 1))
  else echo "$name: FAILED"; fail=$((fail + 1)); fi
}
while read -r pair pa ka fa pb kb fb sa sb sc; do
  echo "$pair" | grep -Eq "$ONLY" || continue
  scales="${SCALES:-${sc:-1}}"
  if [ "${DECIDED_ONLY:-0}" = 1 ]; then :
  elif has_budgets "$pair"; then
    if covered_by_budget_plain "$pair"; then
      echo "$pair: compiled within $pair.budget$(budget_plain "$pair" && echo -sm90) (every line of $pair.cu is in $pair.budget.cu)"
    elif [ "$COMPILE_ONLY" = 1 ]; then run "$pair" "$BIN/$pair" "$sa" "$sb" "$scales"; fi
    run "$pair.budget" "$BIN/$pair.budget" "$sa" "$sb" "$scales"
    if budget_plain "$pair"; then
      run "$pair.budget-sm90" "$BIN/$pair.budget-sm90" "$sa" "$sb" "${BUDGET_PLAIN_SCALE:-0.3}" --check-only
    fi
  else
    run "$pair" "$BIN/$pair" "$sa" "$sb" "$scales"
  fi
  if [ -f "$GEN/$pair.decided.cu" ]; then run "$pair.decided" "$BIN/$pair.decided" "$sa" "$sb" "$scales"; fi
done <"$GEN/pairs.list"
echo "fusion pairs: $pass passed, $fail failed$([ "$skipped" = 0 ] || echo ", $skipped skipped")"
[ "$fail" = 0 ] && [ "$skipped" = 0 ]
