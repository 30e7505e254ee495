#!/usr/bin/env bash
# The corpus as whole programs (issue 13, goal 4), on the GPU machine, from the repository root:
#
#   bash test/gpu/run_on_gpu.sh build/gpu-transformed      # builds both forms and checks them (first)
#   bash bench/ptb_overhead/whole.sh [--reps 5] [--only REGEX]
#
# Every program of test/gpu/ that has a --bench runs its bench work with --whole (test/gpu/common.cuh,
# bench_whole): a fresh process, its launches back to back from the process's first launch on, timed by
# cudaEvents from before the first launch to after the last, so the first launch's loading and set-up
# count. Three forms, each a whole process, alternating, --reps times:
#   orig   the original build (build/gpu-bin/orig/NAME)
#   auto   the transformed build in its default launch mode (PTB_MODE unset: the runtime's automatic
#          dispatch; these programs set no policy, so it launches their original kernels)
#   twin   the transformed build with PTB_MODE=ptb (every launch a PTB twin on all SMs)
# Medians per program and form. A program counts in the figures when its original launch takes at least
# 0.1 ms (median total / launches); the others are listed apart. Prints a table (median total ms per form,
# auto/orig, twin/orig, median first launch per form), then
#   twins (PTB_MODE=ptb): programs: N geomean: X worst: Y (name) first-launch: +A us
#   corpus (whole programs, automatic mode): programs: N geomean: X worst: Y (name) first-launch: +A us
# first-launch: the median over the counted programs of (median first launch of the form - of orig).
# A transformed run whose runtime was set up before its first launch (it launched before the timer) or,
# in auto, set up at all, is flagged. Everything printed also goes to $OUT/whole.txt when $OUT is set
# (raw lines, as they come: $OUT/whole-raw.txt). Once BUDGET_S seconds (default 400) have passed it stops repeating
# (after at least 3 rounds) and says so. Exit status: 0 when every run printed its WHOLE line, else 1.
set -u
cd "$(dirname "$0")/../.."
T0=$(date +%s)
REPS=5 ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) REPS="$2"; shift ;;
    --only) ONLY="$2"; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
BUDGET_S="${BUDGET_S:-400}"
BIN="${PTB_GPU_BIN:-build/gpu-bin}"
# with $OUT set, the report and the raw lines are written there as they come (a call cut short keeps them)
RES="${OUT:-$(mktemp -d)}"
REPORT="$RES/whole.txt" RAW="$RES/whole-raw.txt"
: >"$REPORT"; : >"$RAW"
say() { echo "$@" | tee -a "$REPORT"; }

NAMES=()
for f in test/gpu/*.cu; do
  n="$(basename "$f" .cu)"
  if [ -n "$ONLY" ] && ! [[ "$n" =~ $ONLY ]]; then continue; fi
  grep -q "tg::bench(" "$f" || continue
  if [ ! -x "$BIN/orig/$n" ] || [ ! -x "$BIN/ptb/$n" ]; then
    echo "ERROR: $BIN/orig/$n or $BIN/ptb/$n is missing: run bash test/gpu/run_on_gpu.sh first" >&2
    exit 2
  fi
  NAMES+=("$n")
done
[ ${#NAMES[@]} -gt 0 ] || { echo "ERROR: no programs" >&2; exit 2; }

say "== test/gpu corpus as whole programs (--whole), original vs transformed (issue 13, goal 4)"
say "== $(date -u '+%F %T') UTC; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
say "== tree: $(git rev-parse --short HEAD 2>/dev/null || echo 'no git here')$([ -n "$(git status --porcelain -- test/gpu runtime/include 2>/dev/null)" ] && echo ' (test/gpu or runtime/include modified)')"
say "== ${#NAMES[@]} programs, 3 forms, up to $REPS rounds"

FAILED=0
# run_form FORM NAME ROUND: one process; appends "FORM NAME ROUND <WHOLE line fields>" to RAW
run_form() {
  local form="$1" n="$2" r="$3" exe line
  case "$form" in
    orig) exe="$BIN/orig/$n"; line=$(env -u PTB_MODE timeout 30 "$exe" --whole 2>&1) ;;
    auto) exe="$BIN/ptb/$n"; line=$(env -u PTB_MODE timeout 30 "$exe" --whole 2>&1) ;;
    twin) exe="$BIN/ptb/$n"; line=$(PTB_MODE=ptb timeout 30 "$exe" --whole 2>&1) ;;
  esac
  local w
  w=$(echo "$line" | grep -m1 "^WHOLE ")
  if [ -z "$w" ]; then
    say "  $form $n round $r: no WHOLE line: $(echo "$line" | tail -1)"
    FAILED=1
    return
  fi
  echo "$form $n $r $w" >>"$RAW"
}

rounds=0
for r in $(seq 1 "$REPS"); do
  if [ $rounds -ge 3 ] && [ $(( $(date +%s) - T0 )) -ge "$BUDGET_S" ]; then
    say "== stopped after $rounds rounds: $(( $(date +%s) - T0 )) s passed (BUDGET_S $BUDGET_S)"
    break
  fi
  for n in "${NAMES[@]}"; do
    # rotate which form goes first, so none always follows another
    case $(( r % 3 )) in
      0) order="orig auto twin" ;;
      1) order="auto twin orig" ;;
      2) order="twin orig auto" ;;
    esac
    for form in $order; do run_form "$form" "$n" "$r"; done
  done
  rounds=$((rounds + 1))
done
say "== $rounds rounds in $(( $(date +%s) - T0 )) s"

# RAW fields: form name round WHOLE name first_ms F total_ms T launches N form X runtime_before B runtime_after A
awk -v out="$REPORT" '
  function median(key, k,   n, i, j, t, a) {
    n = cnt[key]
    for (i = 1; i <= n; i++) a[i] = val[key, i]
    for (i = 2; i <= n; i++) { t = a[i]; j = i - 1; while (j >= 1 && a[j] > t) { a[j + 1] = a[j]; j-- } a[j + 1] = t }
    if (n == 0) return -1
    return n % 2 ? a[(n + 1) / 2] : 0.5 * (a[n / 2] + a[n / 2 + 1])
  }
  function add(key, v) { cnt[key]++; val[key, cnt[key]] = v }
  function p(s) { print s; print s >> out }
  {
    form = $1; name = $2
    add(form SUBSEP name SUBSEP "total", $9); add(form SUBSEP name SUBSEP "first", $7)
    launches[name] = $11
    if (form != "orig" && $15 != "none") flag[name] = flag[name] " " form ":set-up-before-timer"
    if (form == "auto" && $17 != "none") flag[name] = flag[name] " auto:runtime-set-up"
    if (!(name in seen)) { seen[name] = 1; order[++nn] = name }
  }
  END {
    p(sprintf("%-34s %8s %10s %10s %10s %8s %8s %9s %9s %9s  %s", "program", "launches", "orig ms", "auto ms", "twin ms",
              "auto/o", "twin/o", "first o", "first a", "first t", "(first: ms; flags)"))
    for (i = 1; i <= nn; i++) {
      n = order[i]
      o = median("orig" SUBSEP n SUBSEP "total"); a = median("auto" SUBSEP n SUBSEP "total"); t = median("twin" SUBSEP n SUBSEP "total")
      fo = median("orig" SUBSEP n SUBSEP "first"); fa = median("auto" SUBSEP n SUBSEP "first"); ft = median("twin" SUBSEP n SUBSEP "first")
      if (o <= 0 || a <= 0 || t <= 0) { p(sprintf("%-34s missing forms", n)); continue }
      counted = (o / launches[n] >= 0.1)
      p(sprintf("%-34s %8d %10.4f %10.4f %10.4f %8.4f %8.4f %9.4f %9.4f %9.4f  %s%s", n, launches[n], o, a, t, a / o, t / o,
                fo, fa, ft, counted ? "" : "(launch < 0.1 ms: not counted)", flag[n]))
      if (!counted) continue
      k++; sa += log(a / o); st += log(t / o)
      if (a / o > wa) { wa = a / o; wan = n }
      if (t / o > wt) { wt = t / o; wtn = n }
      da[k] = (fa - fo) * 1000; dt[k] = (ft - fo) * 1000
    }
    if (k == 0) { p("no program counted"); exit }
    for (i = 1; i <= k; i++) { cnt["da"]++; val["da", i] = da[i]; cnt["dt"]++; val["dt", i] = dt[i] }
    p(sprintf("twins (PTB_MODE=ptb): programs: %d geomean: %.4f worst: %.4f (%s) first-launch: %+.1f us", k, exp(st / k), wt, wtn,
              median("dt")))
    p(sprintf("corpus (whole programs, automatic mode): programs: %d geomean: %.4f worst: %.4f (%s) first-launch: %+.1f us", k,
              exp(sa / k), wa, wan, median("da")))
  }' "$RAW"

[ -n "${OUT:-}" ] || echo "report: $REPORT, raw lines: $RAW"
exit $FAILED
