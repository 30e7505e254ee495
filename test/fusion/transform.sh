#!/usr/bin/env bash
# Runs fuse-kernels on every pair of test/fusion/pairs.txt (every feasible ratio) into
# build/fusion-generated/<pair>.cu, for test/fusion/run_on_gpu.sh (and the nvcc compile check). Pairs that
# the decisions file (DECISIONS, default test/fusion/decisions-demo.txt) has `decide` lines for are also
# fused with --decisions-from into <pair>.decided.cu (the decision launcher fused_pair_launch).
# Pairs with a budgets column are also fused into <pair>.budget.cu: the same candidates plus those with
# register budgets (--reg-budget; run_on_gpu.sh builds it for sm_90a and runs it in place of <pair>.cu).
# REG_BUDGETS=0 leaves them out. <pair>.cu and <pair>.decided.cu do not depend on it.
#   bash test/fusion/transform.sh [OUTPUT_DIR]
#   DECISIONS=harness-output.txt bash test/fusion/transform.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
TOOL="${FUSE_KERNELS:-build/tools/fuse-kernels/fuse-kernels}"
OUTDIR="${1:-build/fusion-generated}"
DECISIONS="${DECISIONS:-test/fusion/decisions-demo.txt}"
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"
C=test/fusion/corpus
while read -r pair pa ka fa ba pb kb fb bb sa sb sc bu; do
  case "$pair" in ''|'#'*) continue ;; esac
  "$TOOL" "$C/$fa.cu" "$C/$fb.cu" --kernel "$ka=$ba" --kernel "$kb=$bb" --all-ratios --min-blocks 1,2 --name fused_pair \
    -o "$OUTDIR/$pair.cu" 2>"$OUTDIR/$pair.log" || { cat "$OUTDIR/$pair.log"; exit 1; }
  printf '%s %s %s %s %s %s %s %s %s %s\n' "$pair" "$pa" "$ka" "$fa" "$pb" "$kb" "$fb" "${sa:-1}" "${sb:-1}" "${sc:-1}" >>"$OUTDIR/pairs.list"
  echo "$pair: $(grep -c '^note: ' "$OUTDIR/$pair.log") ratios -> $OUTDIR/$pair.cu"
  if [ -n "${bu:-}" ] && [ "${REG_BUDGETS:-1}" != 0 ]; then
    "$TOOL" "$C/$fa.cu" "$C/$fb.cu" --kernel "$ka=$ba" --kernel "$kb=$bb" --all-ratios --min-blocks 1,2 --reg-budget "$bu" \
      --name fused_pair -o "$OUTDIR/$pair.budget.cu" 2>"$OUTDIR/$pair.budget.log" || { cat "$OUTDIR/$pair.budget.log"; exit 1; }
    echo "$pair: $(grep -c '^note: .*setmaxnreg' "$OUTDIR/$pair.budget.log") candidates with register budgets ($bu) -> $OUTDIR/$pair.budget.cu"
  fi
  if [ -f "$DECISIONS" ] && grep -Eq "^[[:space:]]*decide[[:space:]]+$ka\+$kb[[:space:]]" "$DECISIONS"; then
    "$TOOL" "$C/$fa.cu" "$C/$fb.cu" --kernel "$ka=$ba" --kernel "$kb=$bb" --decisions-from "$DECISIONS" --name fused_pair \
      -o "$OUTDIR/$pair.decided.cu" 2>"$OUTDIR/$pair.decided.log" || { cat "$OUTDIR/$pair.decided.log"; exit 1; }
    echo "$pair: $(tail -1 "$OUTDIR/$pair.decided.log" | sed 's/^note: //') -> $OUTDIR/$pair.decided.cu"
  fi
done <test/fusion/pairs.txt
