#!/usr/bin/env bash
# The fusion bench on the GPU machine, in one go (bench/fusion/README.md): the corpus against the CPU, then
# every pair of test/fusion/pairs.txt at each of its problem sizes: every fused candidate checked bit for
# bit and timed against the two kernels one after the other and in two streams, and the decision per size
# (`decide` lines); the decision launcher of gemm_coulomb.decided.cu (made-up decisions, one of each kind)
# checked at every size. Run from the repository root with build/fusion-generated carried
# (bash test/fusion/transform.sh makes it, with clang 19):
#   bash bench/fusion/run_on_gpu.sh
# Writes, as it goes, "$OUT/fusion-bench.txt" (everything printed) and at the end "$OUT/decisions.txt"
# (the decide lines: fuse-kernels --decisions-from reads them); OUT defaults to build/fusion-bench-out.
# Stops starting pairs after BUDGET_S seconds (default 420) so that it ends within 8 minutes; REPS (default
# 9) runs per median. The last line is a summary. Exit 0 iff everything ran and passed.
# Register budgets: where build/fusion-generated holds <pair>.budget.cu (transform.sh
# writes one per pair with a budgets column in pairs.txt), that output, built for sm_90a, runs in place of
# <pair>.cu: the same candidates plus 3 with register budgets per pair, checked and timed at every size and
# part of the decision; gemm_stencil and gemm_coulomb also check it built for plain sm_90 at scale 0.3.
set -uo pipefail
cd "$(dirname "$0")/../.."
START=$(date +%s)
OUT="${OUT:-build/fusion-bench-out}"
mkdir -p "$OUT"
LOG="$OUT/fusion-bench.txt"
: >"$LOG"
export FUSION_DEADLINE=$((START + ${BUDGET_S:-420}))
if [ ! -f build/fusion-generated/pairs.list ]; then
  echo "summary: FAILED: build/fusion-generated is missing (run test/fusion/transform.sh where clang 19 is, and carry it)" | tee -a "$LOG"
  exit 1
fi
bash test/fusion/gpu_run.sh --bench -- --reps "${REPS:-9}" 2>&1 | tee -a "$LOG"
rc=${PIPESTATUS[0]}
grep '^decide ' "$LOG" >"$OUT/decisions.txt"
sizes=$(grep -c '^decide ' "$LOG")
fused=$(grep -c '^decide .*: fused ' "$LOG")
streams=$(grep -c '^decide .*: streams ' "$LOG")
sequential=$(grep -c '^decide .*: sequential ' "$LOG")
pairs=$(grep '^fusion pairs: ' "$LOG" | tail -1 | sed 's/^fusion pairs: //')
cpu=$(grep -cE '^[a-z_]+ +\(.*(PASS|FAIL)' "$LOG")
cpufail=$(grep -cE '^[a-z_]+ +\(.*FAIL' "$LOG")
diffs=$(grep -c 'DIFFERS' "$LOG")
budgeted=$(grep -c '^candidate .*budgets ' "$LOG")
budget_wins=$(grep -c '^decide .*: fused [0-9:/]*@' "$LOG")
setmaxnreg=$(grep -c '^setmaxnreg .*: compiled in' "$LOG")
echo "summary: $([ "$rc" = 0 ] && echo PASS || echo FAIL); corpus vs CPU: $((cpu - cpufail))/$cpu; pairs: ${pairs:-none run}; outputs that differ: $diffs; decisions at $sizes sizes: fused $fused (with register budgets $budget_wins), two streams $streams, sequential $sequential; budgeted candidates $budgeted in $setmaxnreg sm_90a builds; $(( $(date +%s) - START )) s" | tee -a "$LOG"
exit "$rc"
