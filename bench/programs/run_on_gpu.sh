#!/usr/bin/env bash
# The whole-program benchmark of issue 13, on the GPU machine (repository root; it has nvcc, not clang):
#
#   bash bench/programs/run_on_gpu.sh [--reps 7] [--only REGEX] [--qosd] [--half] [TRANSFORMED_DIR]
#
# TRANSFORMED_DIR (default build/bench-programs) is what bench/programs/transform.sh wrote on the
# development machine; carry it here. For every bench/programs/*.cu it compiles the original and the
# transformed program (nvcc -std=c++17 -O2 -arch=sm_90 -lineinfo; the transformed one with
# -I runtime/include), then runs each program in three forms, alternating, --reps times each:
#   orig   the original build
#   auto   the transformed build in the runtime's default launch mode (PTB_MODE=auto: dispatch by need;
#          these programs set no policy, so it launches the original kernels)
#   twin   the transformed build with PTB_MODE=ptb (every launch a PTB twin, all SMs)
# Each run is a whole process; its time is what the program measures (cudaEvents from before its first
# launch to after its last: the first launch's set-up counts) and every run checks its result against a
# CPU reference. With --qosd (issue 41: a launch under a controller's policy) it also builds ptb-qosd (the
# project's CMake with -DPTB_COMPILER=OFF), starts it with `--policy off` (BE has every SM, no cap: the
# policy a controller publishes between LS requests) in a private PTB_QOSD_DIR, and adds two forms:
#   linked the transformed build following the controller (PTB_QOSD=1): every launch a twin, which the
#          controller may move
#   short  the same with PTB_ORIGINAL_BELOW_US=$SHORT_US (default 200): a launch learned to end within that
#          budget runs as its original (docs/design/short-launches.md)
#   early  short with PTB_EARLY_SETUP=1: the device set up on the runtime's thread before the first launch
# and their summary lines. With --half (issue 41: confined to half of the GPU) two more forms:
#   green  the original build in a green context of HALF_SMS (default 64) SMs (probes/green_preload.cpp,
#          preloaded: the original given that part of the GPU, the reference)
#   half   the transformed build confined to as many SMs (PTB_SMS=0-<HALF_SMS - 1>: twins inside them)
# and the line "half ... over green". Medians per program and form. Afterwards one run per program confined with PTB_SMS=0-65
# (twins inside 66 SMs; correctness only). One warm-up run of each original first (not counted). A run
# is killed after 45 s; a program and form that failed once is not run again.
#
# Prints: the device, date, commit; a table (median ms per form, auto/orig and twin/orig); the geometric
# mean and worst ratio per form; the first-launch figure, (form - orig) of sobel_once (one launch), in us;
# the per-launch figure, (form - orig) / launches of stencil2d_chain (10^4 launches), in us; and, as the
# very last line, the figures of the default mode (auto):
#   programs: N geomean: X worst: Y first-launch: +A us per-launch: +B us
# The line before it gives the same for the twins ("twins (PTB_MODE=ptb): programs: ..."). Everything
# printed also goes to $OUT/programs.txt when $OUT is set (raw times: $OUT/programs-raw.txt).
# Exit status: 0 when every build, run and check passed; 1 otherwise; 2 when TRANSFORMED_DIR is missing.
# GPU time: about 3-5 minutes (7 programs x 3 forms x 7 runs of 0.5-1.5 s each, mostly process start,
# data set-up and the CPU checks); once BUDGET_S seconds (default 270) have passed since the start it
# stops repeating (after at least 3 runs per form) and says so.
set -u
cd "$(dirname "$0")/../.."
T0=$(date +%s)
REPS=7 ONLY="" TDIR="" QOSD=0 HALF=0
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) REPS="$2"; shift ;;
    --only) ONLY="$2"; shift ;;
    --qosd) QOSD=1 ;;
    --half) HALF=1 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d'; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) TDIR="$1" ;;
  esac
  shift
done
TDIR="${TDIR:-build/bench-programs}"
BUDGET_S="${BUDGET_S:-270}"
. test/gpu/lib.sh
. bench/programs/script_lib.sh
NVCC="$(ptb_nvcc)" || exit 1
BIN="build/bench-programs-bin"
RES="$(mktemp -d)"
REPORT="$RES/report.txt"
: >"$REPORT"
say() { echo "$@" | tee -a "$REPORT"; }

NAMES=()
for f in bench/programs/*.cu; do
  n="$(basename "$f" .cu)"
  if [ -n "$ONLY" ] && ! [[ "$n" =~ $ONLY ]]; then continue; fi
  NAMES+=("$n")
done
[ ${#NAMES[@]} -gt 0 ] || { echo "ERROR: no programs in bench/programs" >&2; exit 2; }
missing=0
for n in "${NAMES[@]}"; do [ -f "$TDIR/$n.cu" ] || { echo "ERROR: $TDIR/$n.cu is missing" >&2; missing=1; }; done
if [ $missing = 1 ]; then
  echo "ERROR: the transformed programs are missing. On the development machine run" >&2
  echo "         PTB_TRANSFORM=<path to ptb-transform> bash bench/programs/transform.sh" >&2
  echo "       and carry $TDIR to this machine (this machine has no clang tool to make them)." >&2
  exit 2
fi

ptb_same_sources "$TDIR" bench/programs/transform.sh || exit 2
say "== bench/programs: whole programs, original vs transformed (issue 13)"
say "== $(date -u '+%F %T') UTC; $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1); $("$NVCC" --version | tail -1)"
say "== tree: $(git rev-parse --short HEAD 2>/dev/null || echo 'no git here')$([ -n "$(git status --porcelain -- bench/programs runtime/include 2>/dev/null)" ] && echo ' (bench/programs or runtime/include modified)')"
[ -f "$TDIR/SOURCE.txt" ] && sed 's/^/== transformed sources: /' "$TDIR/SOURCE.txt" | tee -a "$REPORT"
say "== programs: ${NAMES[*]}; $REPS runs per form"

# ---- build (all in parallel)
mkdir -p "$BIN/orig" "$BIN/ptb"
FLAGS=(-std=c++17 -O2 -arch=sm_90 -lineinfo)
for n in "${NAMES[@]}"; do
  rm -f "$BIN/orig/$n" "$BIN/ptb/$n"
  "$NVCC" "${FLAGS[@]}" -I bench/programs "bench/programs/$n.cu" -o "$BIN/orig/$n" >"$BIN/orig/$n.log" 2>&1 &
  twins=(); [ -f "$TDIR/$n.twins.cu" ] && twins=("$TDIR/$n.twins.cu")  # twins apart: both, one program
  "$NVCC" "${FLAGS[@]}" -I runtime/include -I bench/programs "$TDIR/$n.cu" ${twins[@]+"${twins[@]}"} -o "$BIN/ptb/$n" >"$BIN/ptb/$n.log" 2>&1 &
done
wait
FAILED=0
for n in "${NAMES[@]}"; do
  for v in orig ptb; do
    if [ ! -x "$BIN/$v/$n" ]; then
      say "BUILD FAILED: $v $n"; tail -20 "$BIN/$v/$n.log" | tee -a "$REPORT"; FAILED=1
    fi
  done
done
say "== built in $(( $(date +%s) - T0 )) s"

# ---- with --qosd: the controller the linked forms follow (every SM, no cap), in a private folder
FORMS=(orig auto twin)
QOSD_PID=""
if [ "$QOSD" = 1 ]; then
  SHORT_US="${SHORT_US:-200}"
  start_qosd "$BIN/qosd" "$RES/qosd.log" 2>"$RES/qosd.err" ||
    { say "BUILD OR START FAILED: ptb-qosd"; tee -a "$REPORT" <"$RES/qosd.err"; exit 1; }
  say "== ptb-qosd $QOSD_PID up (--policy off: every SM, no cap); short form: PTB_ORIGINAL_BELOW_US=$SHORT_US"
  FORMS+=(linked short early)
fi
if [ "$HALF" = 1 ]; then
  HALF_SMS="${HALF_SMS:-64}"
  "$NVCC" -shared -cudart none -Xcompiler -fPIC bench/programs/probes/green_preload.cpp -lcuda -o "$BIN/green_preload.so" \
    >"$RES/green.log" 2>&1 || { say "BUILD FAILED: green_preload.so"; tee -a "$REPORT" <"$RES/green.log"; exit 1; }
  say "== --half: green = the original in a green context of $HALF_SMS SMs; half = PTB_SMS=0-$((HALF_SMS - 1))"
  FORMS+=(green half)
fi

# ---- one run: run_form FORM NAME [ENV...] -> appends the time to $RES/NAME.FORM, or reports a failure
# what the program must report: its form, and whether the PTB runtime set itself up (the automatic mode
# with no policy must not: it launches the original kernels and touches nothing)
expect_form() { case "$1" in orig | green) echo original ;; twin) echo ptb-ptb ;; *) echo ptb-auto ;; esac; }
expect_rt() { case "$1" in orig | auto | green) echo none ;; *) echo set-up ;; esac; }
run_form() {
  local form="$1" n="$2" exe log line ms got grt
  shift 2
  case "$form" in orig | green) exe="$BIN/orig/$n" ;; *) exe="$BIN/ptb/$n" ;; esac
  [ -x "$exe" ] || return 0
  [ -f "$RES/$n.$form.failed" ] && return 0  # failed once: not repeated (the first failure is reported)
  log="$RES/$n.$form.log"
  timeout -s KILL 45 env -u PTB_MODE -u PTB_SMS -u PTB_BLOCKS_PER_SM -u PTB_QOSD -u PTB_ORIGINAL_BELOW_US -u PTB_EARLY_SETUP "$@" "$exe" >"$log" 2>&1
  local rc=$?
  line="$(grep -m1 "^PROGRAM $n " "$log")"
  got="$(echo "$line" | awk '{print $8}')"
  grt="$(echo "$line" | awk '{print $10}')"
  ms="$(echo "$line" | awk '{print $4}')"
  if [ $rc != 0 ] || [ -z "$line" ] || [ "$got" != "$(expect_form "$form")" ] || [ "$grt" != "$(expect_rt "$form")" ]; then
    say "RUN FAILED: $n, form $form ($*): exit $rc, reported form '${got:-none}' runtime '${grt:-none}'" \
        "(want $(expect_form "$form"), $(expect_rt "$form"))"
    sed 's/^/    /' "$log" | tail -8 | tee -a "$REPORT"
    [ $rc = 137 ] && say "    (killed after 45 s: a hang?)"
    touch "$RES/$n.$form.failed"
    FAILED=1
    return 0
  fi
  echo "$ms" >>"$RES/$n.$form"
  echo "$line" >>"$RES/raw.txt"
  echo "$line" | awk '{print $6}' >"$RES/$n.launches"
}
declare -A ENVS=([orig]="" [auto]="PTB_MODE=auto" [twin]="PTB_MODE=ptb" [conf]="PTB_SMS=0-65" [linked]="PTB_QOSD=1"
                 [short]="PTB_QOSD=1 PTB_ORIGINAL_BELOW_US=${SHORT_US:-200}"
                 [early]="PTB_QOSD=1 PTB_ORIGINAL_BELOW_US=${SHORT_US:-200} PTB_EARLY_SETUP=1"
                 [green]="LD_PRELOAD=$PWD/$BIN/green_preload.so GREEN_SMS=${HALF_SMS:-64}"
                 [half]="PTB_SMS=0-$((${HALF_SMS:-64} - 1))")

# ---- warm-up, then the repeats, alternating the forms' order
for n in "${NAMES[@]}"; do run_form orig "$n" && rm -f "$RES/$n.orig"; done
: >"$RES/raw.txt"
ORDERS=("orig auto twin" "auto twin orig" "twin orig auto" "orig twin auto" "auto orig twin" "twin auto orig")
done_reps=0
for ((r = 0; r < REPS; ++r)); do
  el=$(( $(date +%s) - T0 ))
  if [ $r -ge 3 ] && [ $el -gt "$BUDGET_S" ]; then
    say "== NOTE: stopped after $r runs per form (${el} s elapsed, budget ${BUDGET_S} s)"
    break
  fi
  for n in "${NAMES[@]}"; do
    # shellcheck disable=SC2086
    if [ ${#FORMS[@]} != 3 ]; then  # more forms than the three: rotated
      k=$(( (r + ${#n}) % ${#FORMS[@]} )); order="${FORMS[*]:k} ${FORMS[*]:0:k}"
    else
      order="${ORDERS[$(( (r + ${#n}) % 6 ))]}"
    fi
    for form in $order; do run_form "$form" "$n" ${ENVS[$form]}; done
  done
  done_reps=$((r + 1))
done
say "== $done_reps runs per form done at +$(( $(date +%s) - T0 )) s"

# ---- confined: correctness only
for n in "${NAMES[@]}"; do
  run_form conf "$n" PTB_SMS=0-65 && [ -f "$RES/$n.conf" ] && say "confined PTB_SMS=0-65: $n PASS ($(cat "$RES/$n.conf") ms)"
done

# ---- the table
med() { [ -s "$1" ] && sort -g "$1" | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
TABLE="$RES/table.txt"
: >"$TABLE"
for n in "${NAMES[@]}"; do
  o=$(med "$RES/$n.orig"); a=$(med "$RES/$n.auto"); t=$(med "$RES/$n.twin")
  L=$(cat "$RES/$n.launches" 2>/dev/null || echo 0)
  k=$(med "$RES/$n.linked"); sh=$(med "$RES/$n.short"); ea=$(med "$RES/$n.early"); g=$(med "$RES/$n.green")
  h=$(med "$RES/$n.half")
  echo "$n ${o:-NA} ${a:-NA} ${t:-NA} $L $(wc -l <"$RES/$n.orig" 2>/dev/null || echo 0) ${k:-NA} ${sh:-NA} ${ea:-NA}" \
    "${g:-NA} ${h:-NA}" >>"$TABLE"
done
say ""
awk '
  function r(x, y) { return (x == "NA" || y == "NA" || y == 0) ? "NA" : sprintf("%.4f", x / y) }
  BEGIN { printf "%-18s %8s %11s %11s %11s %10s %10s %5s\n", "program", "launches", "orig ms", "auto ms", "twin ms",
          "auto/orig", "twin/orig", "runs" }
  { printf "%-18s %8s %11s %11s %11s %10s %10s %5s\n", $1, $5, $2, $3, $4, r($3, $2), r($4, $2), $6 }' "$TABLE" | tee -a "$REPORT"
if [ "$QOSD" = 1 ]; then
  say ""
  say "under ptb-qosd --policy off (every SM, no cap): linked = PTB_QOSD=1, short = and PTB_ORIGINAL_BELOW_US=$SHORT_US, early = short and PTB_EARLY_SETUP=1"
  awk '
    function r(x, y) { return (x == "NA" || y == "NA" || y == 0) ? "NA" : sprintf("%.4f", x / y) }
    BEGIN { printf "%-18s %8s %11s %11s %11s %11s %12s %11s %11s\n", "program", "launches", "orig ms", "linked ms",
            "short ms", "early ms", "linked/orig", "short/orig", "early/orig" }
    { printf "%-18s %8s %11s %11s %11s %11s %12s %11s %11s\n", $1, $5, $2, $7, $8, $9, r($7, $2), r($8, $2),
             r($9, $2) }' "$TABLE" | tee -a "$REPORT"
fi
say ""
summary() {  # summary COLUMN LABEL [REF]: geomean/worst of the form in COLUMN (3: auto, 4: twin) over REF (2: orig)
  awk -v c="$1" -v label="$2" -v o="${3:-2}" '
    $o != "NA" && $c != "NA" && $o > 0 { q = $c / $o; s += log(q); k++; if (q > w) { w = q; wn = $1 } }
    $1 == "sobel_once" && $o != "NA" && $c != "NA" { fl = sprintf("%+.1f", ($c - $o) * 1000) }
    $1 == "stencil2d_chain" && $o != "NA" && $c != "NA" && $5 > 0 { pl = sprintf("%+.2f", ($c - $o) * 1000 / $5) }
    END {
      if (!k) { print label "programs: 0 geomean: NA worst: NA first-launch: NA us per-launch: NA us"; exit }
      printf "%sprograms: %d geomean: %.4f worst: %.4f (%s) first-launch: %s us per-launch: %s us\n", label, k,
             exp(s / k), w, wn, fl == "" ? "NA" : fl, pl == "" ? "NA" : pl
    }' "$TABLE"
}
# the worst program's name in parentheses is dropped from the last line, which keeps its exact form
say "first-launch: (form - orig) of sobel_once, one launch, in us; per-launch: (form - orig) / launches of stencil2d_chain, in us"
say "$(summary 4 'twins (PTB_MODE=ptb): ')"
if [ "$QOSD" = 1 ]; then
  say "$(summary 7 'linked (PTB_QOSD=1, every launch a twin): ')"
  say "$(summary 8 "short (PTB_QOSD=1 PTB_ORIGINAL_BELOW_US=$SHORT_US): ")"
  say "$(summary 9 "early (short and PTB_EARLY_SETUP=1): ")"
fi
if [ "$HALF" = 1 ]; then
  say ""
  say "confined to $HALF_SMS SMs (half = PTB_SMS=0-$((HALF_SMS - 1))) against the original in a green context of as many (green)"
  awk '
    function r(x, y) { return (x == "NA" || y == "NA" || y == 0) ? "NA" : sprintf("%.4f", x / y) }
    BEGIN { printf "%-18s %8s %11s %11s %11s %11s %11s\n", "program", "launches", "orig ms", "green ms", "half ms",
            "green/orig", "half/green" }
    { printf "%-18s %8s %11s %11s %11s %11s %11s\n", $1, $5, $2, $10, $11, r($10, $2), r($11, $10) }' "$TABLE" |
    tee -a "$REPORT"
  say "$(summary 11 "half (PTB_SMS=0-$((HALF_SMS - 1))) over green ($HALF_SMS-SM green context): " 10)"
fi
say "$(summary 3 'default (automatic) mode: ')"
if [ -n "${OUT:-}" ]; then
  cp "$REPORT" "$OUT/programs.txt"
  cp "$RES/raw.txt" "$OUT/programs-raw.txt"
  tar -C "$RES" -czf "$OUT/programs-logs.tar.gz" . 2>/dev/null
fi
[ $FAILED = 0 ] || say "== SOME BUILDS, RUNS OR CHECKS FAILED (see above)"
summary 3 '' | sed 's/ worst: \([0-9.]*\) ([^)]*)/ worst: \1/' | tee -a "$REPORT"
[ -n "${OUT:-}" ] && cp "$REPORT" "$OUT/programs.txt"
exit $FAILED
