#!/usr/bin/env bash
# Runs fuse-kernels on every pair of test/fusion/pairs.txt (every feasible ratio) into
# build/fusion-generated/<pair>.cu, for test/fusion/run_on_gpu.sh (and the nvcc compile check). Pairs that
# the decisions file (DECISIONS, default test/fusion/decisions-demo.txt) has `decide` lines for are also
# fused with --decisions-from into <pair>.decided.cu (the decision launcher fused_pair_launch).
# Pairs with a budgets column are also fused into <pair>.budget.cu: the same candidates plus those with
# register budgets (--reg-budget; run_on_gpu.sh builds it for sm_90a and runs it in place of <pair>.cu).
# REG_BUDGETS=0 leaves them out. <pair>.cu and <pair>.decided.cu do not depend on it.
# --subset (CI, test/CMakeLists.txt): every pair is still fused at every ratio (into <pair>.all-ratios.cu, which
# nothing compiles), but <pair>.cu and <pair>.budget.cu hold only two ratios, each at --min-blocks 1 and 2:
# 1:1 and the ratio with the most slots (the last of those with as many), plus the budgeted candidates.
#   bash test/fusion/transform.sh [--subset] [OUTPUT_DIR]
#   DECISIONS=harness-output.txt bash test/fusion/transform.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
TOOL="${FUSE_KERNELS:-build/tools/fuse-kernels/fuse-kernels}"
SUBSET=0
[ "${1:-}" = --subset ] && { SUBSET=1; shift; }
OUTDIR="${1:-build/fusion-generated}"
DECISIONS="${DECISIONS:-test/fusion/decisions-demo.txt}"
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"
[ $SUBSET = 0 ] || echo "ratios 1:1 and the one with the most slots (transform.sh --subset)" >"$OUTDIR/SUBSET"
C=test/fusion/corpus
# subset OUTPUT BUDGETS: fuse the pair read last (ka ba kb bb fa fb) at the ratios 1:1 and $most, --min-blocks
# 1 and 2, with BUDGETS (pairs.txt's column, comma-separated) as reg_budgets; the log beside OUTPUT.
kernel_json() {  # NAME BLOCK[,DYNAMIC_SHARED]
  local dyn=""; [ "${2#*,}" != "$2" ] && dyn=", \"dynamic_shared\": ${2#*,}"
  printf '{"name": "%s", "block": "%s"%s}' "$1" "${2%%,*}" "$dyn"
}
subset() {
  local out="$1" budgets="" ratios='"1:1"' abs="$1"
  case "$abs" in /*) ;; *) abs="$PWD/$abs" ;; esac
  [ -n "$2" ] && budgets=", \"reg_budgets\": [\"${2//,/\", \"}\"]"
  [ "$most" != 1:1 ] && ratios="$ratios, \"$most\""
  printf '{"fusions": [{"kernels": [%s, %s], "ratios": [%s], "min_blocks": [1, 2]%s, "name": "fused_pair", "output": "%s"}]}\n' \
    "$(kernel_json "$ka" "$ba")" "$(kernel_json "$kb" "$bb")" "$ratios" "$budgets" "$abs" >"${out%.cu}.json"
  "$TOOL" --config "${out%.cu}.json" "$C/$fa.cu" "$C/$fb.cu" 2>"${out%.cu}.log"
}
while read -r pair pa ka fa ba pb kb fb bb sa sb sc bu; do
  case "$pair" in ''|'#'*) continue ;; esac
  all="$pair"; [ $SUBSET = 1 ] && all="$pair.all-ratios"
  "$TOOL" "$C/$fa.cu" "$C/$fb.cu" --kernel "$ka=$ba" --kernel "$kb=$bb" --all-ratios --min-blocks 1,2 --name fused_pair \
    -o "$OUTDIR/$all.cu" 2>"$OUTDIR/$all.log" || { cat "$OUTDIR/$all.log"; exit 1; }
  printf '%s %s %s %s %s %s %s %s %s %s\n' "$pair" "$pa" "$ka" "$fa" "$pb" "$kb" "$fb" "${sa:-1}" "${sb:-1}" "${sc:-1}" >>"$OUTDIR/pairs.list"
  echo "$pair: $(grep -c '^note: ' "$OUTDIR/$all.log") ratios -> $OUTDIR/$all.cu"
  if [ $SUBSET = 1 ]; then
    most=$(sed -nE 's/^note: fused_pair_[0-9_]+: ratio ([0-9]+:[0-9]+), [0-9]+ threads, ([0-9]+) slots.*/\2 \1/p' "$OUTDIR/$all.log" |
      sort -s -n -k1,1 | tail -1 | cut -d' ' -f2)
    subset "$OUTDIR/$pair.cu" "" || { cat "$OUTDIR/$pair.log"; exit 1; }
    echo "$pair: ratios 1:1 and $most -> $OUTDIR/$pair.cu"
  fi
  if [ -n "${bu:-}" ] && [ "${REG_BUDGETS:-1}" != 0 ]; then
    if [ $SUBSET = 1 ]; then
      subset "$OUTDIR/$pair.budget.cu" "$bu" || { cat "$OUTDIR/$pair.budget.log"; exit 1; }
    else
      "$TOOL" "$C/$fa.cu" "$C/$fb.cu" --kernel "$ka=$ba" --kernel "$kb=$bb" --all-ratios --min-blocks 1,2 --reg-budget "$bu" \
        --name fused_pair -o "$OUTDIR/$pair.budget.cu" 2>"$OUTDIR/$pair.budget.log" || { cat "$OUTDIR/$pair.budget.log"; exit 1; }
    fi
    echo "$pair: $(grep -c '^note: .*setmaxnreg' "$OUTDIR/$pair.budget.log") candidates with register budgets ($bu) -> $OUTDIR/$pair.budget.cu"
  fi
  if [ -f "$DECISIONS" ] && grep -Eq "^[[:space:]]*decide[[:space:]]+$ka\+$kb[[:space:]]" "$DECISIONS"; then
    "$TOOL" "$C/$fa.cu" "$C/$fb.cu" --kernel "$ka=$ba" --kernel "$kb=$bb" --decisions-from "$DECISIONS" --name fused_pair \
      -o "$OUTDIR/$pair.decided.cu" 2>"$OUTDIR/$pair.decided.log" || { cat "$OUTDIR/$pair.decided.log"; exit 1; }
    echo "$pair: $(tail -1 "$OUTDIR/$pair.decided.log" | sed 's/^note: //') -> $OUTDIR/$pair.decided.cu"
  fi
done <test/fusion/pairs.txt
