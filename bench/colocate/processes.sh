#!/usr/bin/env bash
# Co-location as it is deployed (issue 40): the LS service and the BE job are separate programs on one GPU,
# the LS program unchanged, BE compiled with ptb-transform and following ptb-qosd (PTB_QOSD=1), under MPS.
# On the GPU machine, from the repository root:
#
#   bash bench/colocate/processes.sh [TRANSFORMED_DIR]
#
# TRANSFORMED_DIR (default build/bench-colocate): bench/colocate/transform.sh's output, carried here.
# Builds colocate (run_on_gpu.sh --build-only), ptb-qosd, libptb-ls.so and the fault driver with g++/nvcc
# (no clang here), then, each row one LS process and one BE process started together (each says it is
# ready, then both get the go: their windows coincide):
#   - LS: the PyTorch service (ls_torch.py: ResNet-50 at batch 1, fp16, one CUDA graph a request; MODEL and
#     EAGER=1 change it) at LOAD (default 0.5) of its solo capacity, Poisson arrivals, SECS (default 8) s
#     after SETTLE (0.5) s; and, in the rows marked colo-ls, bench/colocate's own LS client (--role ls);
#   - BE: bench/colocate's BE program BE (default compute), its original kernels (plain) or following the
#     controller (--be-follow with PTB_QOSD=1);
#   - rows: time-slicing (no MPS), MPS with BE at 100% and 25% of the threads (and at a lower MPS client
#     priority), each ptb-qosd policy; LS solo
#     without libptb-ls, preloaded and injected (what marking costs LS); LS_WITH=preload|inject picks how the
#     LS program gets the library in the controller's rows (default preload);
#   - the fault: ptb-qosd killed (SIGKILL) while both run: BE's time to its safe state, the restarted
#     controller's time to be followed (test/gpu/qosd/controller_fault.cpp); LS must finish and pass its check;
#   - a second ptb-qosd on the GPU must be refused.
# PART=faults runs LS alone under MPS (the reference) and the fault cases alone.
# PART=goal runs only the rows the issue's goal compares (time-slicing with its references in TS_SECS windows,
# default 8 s; LS solo, BE solo and BE as twins under `--policy off` (their rates also in TS_SECS windows), MPS at
# 25%, the gate through the controller,
# the in-process gate), for long
# windows (SECS=47: about 21,900 PyTorch requests; 43 s gave 19,846 to 20,747, as the measured capacity varies).
# PART=frontier (issue 42): each system along its knob in one run, the same arrivals: time-slicing, MPS with
# BE at MPS_PCTS (default "10 25 50 75") % of the threads, BE in a green context of GREENS (default
# "16 32 48 64 96") SMs, the vendor-only gate (BE moved at kernel boundaries between the whole GPU and a green
# context of GREEN_GATES, default "8 16 32", SMs as ptb-qosd's gate says), ptb-qosd's policies (GATES, with its
# own default), and LS alone at LS_PCTS (default
# "50 75 90") % of the threads; then bench/colocate/frontier.py writes frontier.md (BE's best share at each LS
# p99 tolerance, per system, and the bounds) and frontier.png.
# LS=colo: every row's LS is bench/colocate's client (colocate --role ls) instead of the PyTorch service, with its
# options from LS_ARGS; issue 42's narrow LS is LS_ARGS="--ls-n 128 --ls-layers 24" (GEMMs of 64 blocks, 49
# kernels a request; the capacity line says whether a request lands in the 100-300 us the issue names).
# COLO=0 leaves out the rows with bench/colocate's LS client, TWO_BE=0 those with two BE processes (BE's room
# shared or split by ptb-qosd's be_share), FAULTS=0 the fault and killed-process cases at the end.
# DEVICE=N runs on GPU N only; MPS_EXTERNAL=1 uses the MPS daemon of the caller (bench/colocate/two_gpus.sh: one
# daemon, one run per GPU). GATES: the controller's rows, "|"-separated ptb-qosd options, each optionally
# followed by ": VAR=VALUE ..." for BE's environment (e.g. "gate --poll-us 5 : PTB_CHECK_CYCLES=4096"), where
# a word LS.VAR=VALUE goes to the LS process's environment instead (LS.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=94).
# LS_PCTS (PART=goal): LS alone at those MPS thread percentages too, in TS_SECS windows.
# STATUS_MID=1 saves each controller row's `ptb-qosd status`, taken 10 s into the row, in its .status.txt.
# TRACE=1 writes, for each row with the PyTorch service, its requests ($name.requests.tsv: ls_torch.py --dump), and
# for each controller row the decisions file and bench/colocate/attribute.py's table ($name.attribution.txt); it
# also runs the rows mps-ls-solo-preloaded (LS alone with libptb-ls, as in the controller's rows, but with no
# controller up, so nothing marked) and mps-ls-solo-marked (the same under ptb-qosd's gate: every launch marked).
# CAPACITY=R: the PyTorch service's capacity in requests/s, measured by the caller with nothing else running,
# instead of the measure at the start of the run (which another GPU's run starting at the same time lowers).
# REQUESTS=N: the PyTorch rows' windows long enough for N requests at the measured rate (instead of SECS).
# LS_REFS="NO_MPS_P99 MPS_P99" (PART=goal, with CAPACITY): LS alone is not run again, its p99s without and under
# MPS are the caller's (goal.sh's later BEs take their first BE's, measured minutes before in the same call). A run
# that measured them writes "CAPACITY NO_MPS_P99 MPS_P99" to $OUT/ls-refs.txt.
# COLO_SECS (default 8): the window of the rows with bench/colocate's LS client (26,000 requests at 8 s).
# Everything goes to $OUT (default build/processes-out): processes.md (the table), run.log, per-row logs.
set -u
# PIN=1: the whole run on the CPUs nearest its GPU (the "CPU Affinity" of GPU DEVICE, default 0, in nvidia-smi
# topo -m), as a node's topology manager places pods; where that column cannot be read: not pinned, and said.
if [ "${PIN:-0}" = 1 ] && [ -z "${PTB_PINNED:-}" ]; then
  cpus=$(nvidia-smi topo -m 2>/dev/null | awk -f "$(dirname "$0")/gpu_cpus.awk" -v gpu="GPU${DEVICE:-0}")
  if [ -n "$cpus" ] && command -v taskset >/dev/null; then
    echo "processes.sh: PIN=1: on CPUs $cpus (GPU ${DEVICE:-0}'s)"
    exec env PTB_PINNED="$cpus" taskset -c "$cpus" bash "$0" "$@"
  fi
  echo "processes.sh: PIN=1: no CPU affinity for GPU ${DEVICE:-0} in nvidia-smi topo -m; not pinned"
fi
cd "$(dirname "$0")/../.."
TDIR="${1:-build/bench-colocate}"
OUT="${OUT:-build/processes-out}"
PART="${PART:-all}"
LSK="${LS:-torch}" # LS=colo: the rows' LS is bench/colocate's client (its options in LS_ARGS) instead of PyTorch
case "$LSK" in torch | colo) ;; *) echo "processes.sh: LS=$LSK: torch or colo" >&2; exit 2 ;; esac
SECS="${SECS:-8}" COLO_SECS="${COLO_SECS:-8}" SETTLE="${SETTLE:-0.5}" LOAD="${LOAD:-0.5}" BE="${BE:-compute}" MODEL="${MODEL:-resnet50}"
T0=$(date +%s)
# DEVICE=N: everything (ptb-qosd, LS, BE) on the machine's GPU N only; "--device 0" below is then that GPU.
[ -n "${DEVICE:-}" ] && export CUDA_VISIBLE_DEVICES="$DEVICE"
mkdir -p "$OUT"
LOG="$OUT/run.log"
say() { echo "$@" | tee -a "$LOG"; }
. test/gpu/lib.sh
NVCC="$(ptb_nvcc)" || exit 1
BIN=build/processes-bin
mkdir -p "$BIN"

# ---- build
{
  date -u; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader; "$NVCC" --version | tail -1
  echo "CPUs: ${PTB_PINNED:-not pinned}"
  python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__)'
} 2>&1 | tee "$OUT/env.txt"
if [ "${SKIP_BUILD:-0}" != 1 ]; then # SKIP_BUILD=1: built by the caller (BUILD_ONLY=1 builds and stops)
  bash bench/colocate/run_on_gpu.sh --build-only "$BIN" "$TDIR" >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
  ptb_build_qosd "$BIN/qosd" >>"$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; } # test/gpu/lib.sh
  cp "$BIN/qosd/tools/ptb-qosd/ptb-qosd" "$BIN/qosd/runtime/ls/libptb-ls.so" "$BIN/"
  g++ -std=c++17 -O2 -I runtime/include test/gpu/qosd/controller_fault.cpp -o "$BIN/controller_fault" >>"$OUT/build.log" 2>&1 ||
    { cat "$OUT/build.log"; exit 1; }
  say "built in $(( $(date +%s) - T0 )) s"
fi
[ "${BUILD_ONLY:-0}" = 1 ] && exit 0

# tmpfs: the LS library registers the segment with CUDA. A caller's PTB_QOSD_DIR is kept (two_gpus.sh: one
# folder for every GPU's segment, as on a node).
export PTB_QOSD_DIR="${PTB_QOSD_DIR:-$(mktemp -d -p /dev/shm)}"
SEGMENT="" GPU_KEY="" # known once the first controller made its segment (the key of CUDA's device 0)
LSLIB="$PWD/$BIN/libptb-ls.so"
# How the LS program gets libptb-ls: preloaded (LS_WITH=preload, the default: interposed entry points) or
# injected (LS_WITH=inject: CUPTI callbacks).
case "${LS_WITH:-preload}" in
  preload) MARK_ENV="LD_PRELOAD=$LSLIB" ;;
  inject) MARK_ENV="CUDA_INJECTION64_PATH=$LSLIB" ;;
  *) echo "LS_WITH must be preload or inject"; exit 2 ;;
esac
TMP="$(mktemp -d)"
QOSD_PID=""
qosd_start() { # ptb-qosd options... (ptb_qosd_up: test/gpu/lib.sh)
  ptb_qosd_up "$BIN/ptb-qosd" "$OUT/qosd.log" --metrics-file "$OUT/metrics.prom" "$@" 2>>"$LOG" ||
    { say "ptb-qosd did not start (qosd.log)"; return 1; }
  SEGMENT=$QOSD_SEGMENT GPU_KEY=$QOSD_KEY
}
qosd_stop() { [ -n "$QOSD_PID" ] && kill "$QOSD_PID" 2>/dev/null && wait "$QOSD_PID" 2>/dev/null; QOSD_PID=""; }
# qosd_row "PTB-QOSD OPTIONS" ROW-ARGUMENTS...: one row under a controller started with those options for it
# TRACE=1: the controller's decisions file ($name.decisions.tsv) beside the service's request dump, and
# attribute.py's classes of requests ($name.attribution.txt, against the MPS solo row's dump).
qosd_row() {
  local opts=$1 name=$2 trace=()
  shift
  [ "${TRACE:-0}" = 1 ] && trace=(--decisions-file "$OUT/$name.decisions.tsv")
  qosd_start $opts "${trace[@]}" || return 1
  row "$@"
  qosd_stop
  if [ "${TRACE:-0}" = 1 ] && [ -s "$OUT/$name.requests.tsv" ]; then
    local solo=(); [ -s "$OUT/mps-ls-solo.requests.tsv" ] && solo=(--solo "$OUT/mps-ls-solo.requests.tsv")
    python3 bench/colocate/attribute.py "$OUT/$name.requests.tsv" "$OUT/$name.decisions.tsv" "${solo[@]}" \
      >"$OUT/$name.attribution.txt" 2>&1
  fi
}

# ls_word WORD LOG: the word after WORD on the LS line of LOG ("TORCH requests ..." or "ROLE ls ...")
ls_word() { awk -v w="$1" '/^TORCH requests|^ROLE ls/ {for (i = 1; i < NF; i++) if ($i == w) print $(i + 1)}' "$2"; }
# One row: NAME LS_KIND(torch|colo|none) BE_FORM(plain|follow|none) [ENV for BE...] ; LS_ENV for the LS side.
# Appends its line to processes.md (the columns of the header below) and says it in run.log.
BE_SOLO=""
row() {
  local name=$1 ls=$2 be=$3; shift 3
  local go="$TMP/go.$name" n=0
  rm -f "$go" "$TMP/ls.ready" "$TMP"/be.ready.*
  local lsout="$OUT/$name.ls.log" beouts=() bepids=() lspid="" procs=${BE_PROCS:-1} i
  for i in $(seq "$procs"); do
    if [ "$procs" = 1 ]; then beouts+=("$OUT/$name.be.log"); else beouts+=("$OUT/$name.be$i.log"); fi
  done
  : >"$lsout"
  if [ "$be" != none ]; then
    local follow=(); [ "$be" = follow ] && follow=(--be-follow)
    for i in $(seq "$procs"); do
      env COLO_READY="$TMP/be.ready.$i" COLO_GO="$go" "$@" timeout 150 "$BIN/colocate" --role be --be-kind "$BE" \
        "${follow[@]}" ${BE_ARGS:-} --settle "$SETTLE" --secs "$SECS" >"${beouts[$((i - 1))]}" 2>&1 &
      bepids+=($!)
    done
  else for i in $(seq "$procs"); do touch "$TMP/be.ready.$i"; done; fi
  if [ "$ls" = torch ]; then
    local dump=(); [ "${TRACE:-0}" = 1 ] && dump=(--dump "$OUT/$name.requests.tsv")
    env COLO_READY="$TMP/ls.ready" COLO_GO="$go" ${LS_ENV:-} timeout 150 python3 bench/colocate/ls_torch.py --model "$MODEL" \
      ${EAGER:+--eager} --rate "$RATE" --settle "$SETTLE" --secs "$SECS" "${dump[@]}" >"$lsout" 2>&1 &
    lspid=$!
  elif [ "$ls" = colo ]; then
    env COLO_READY="$TMP/ls.ready" COLO_GO="$go" ${LS_ENV:-} timeout 150 "$BIN/colocate" --role ls --rate "$COLO_RATE" \
      ${LS_ARGS:-} --settle "$SETTLE" --secs "$SECS" >"$lsout" 2>&1 &
    lspid=$!
  else touch "$TMP/ls.ready"; fi
  while [ ! -f "$TMP/ls.ready" ] || [ "$(ls "$TMP"/be.ready.* 2>/dev/null | wc -l)" -lt "$procs" ]; do
    sleep 0.05; n=$((n + 1)); [ $n -gt 2400 ] && { say "row $name: not ready in 120 s"; break; }
  done
  touch "$go"
  local t0=$EPOCHREALTIME
  [ -n "$FAULT_CMD" ] && eval "$FAULT_CMD" >"$OUT/$name.fault.log" 2>&1
  # STATUS_MID=1, a controller up: its status 10 s into the row ($name.status.txt): which processes it serves
  [ "${STATUS_MID:-0}" = 1 ] && [ -n "$QOSD_PID" ] &&
    { sleep 10; "$BIN/ptb-qosd" status --gpu "$GPU_KEY" >"$OUT/$name.status.txt" 2>&1; }
  local lsrc=0
  [ -n "$lspid" ] && { wait "$lspid"; lsrc=$?; }
  local berc=0 p
  for p in "${bepids[@]}"; do wait "$p" || berc=$?; done
  local clk="" mhz="" watts="" # the GPU's mean SM clock and power over the row (CLOCKS=1)
  [ -s "$OUT/clocks.csv" ] && clk=$(awk -F', *' -v a="$t0" -v b="$EPOCHREALTIME" \
    '$1 >= a && $1 <= b && $2 + 0 > 0 {c += $2; w += $3; n++} END {if (n) printf "%.0f %.0f", c / n, w / n}' "$OUT/clocks.csv")
  [ -n "$clk" ] && read -r mhz watts <<<"$clk"
  local p50 p99 split lsbusy be_rate check=ok
  if [ "$ls" != none ]; then # "TORCH requests N p50 X p99 Y ..." or "ROLE ls requests N p50 X p99 Y ..."
    read -r p50 p99 < <(awk '/^TORCH requests/ {print $5, $7} /^ROLE ls/ {print $6, $8}' "$lsout")
    # the p99 of the window's first half against its second's (larger over smaller): does the p99 repeat?
    split=$(ls_word split "$lsout")
    # the fraction of the window the service spent in requests (ls_torch.py; colocate's client prints none)
    lsbusy=$(ls_word busy "$lsout")
    grep -q "check ok" "$lsout" || check=LS-FAILED
  fi
  local each=""
  if [ "$be" != none ]; then # BE's rate: the sum over its processes (each one's in the log line)
    be_rate=$(cat "${beouts[@]}" | awk '/^ROLE be/ {s += $5; n++} END {if (n) printf "%.0f", s}')
    each=$(cat "${beouts[@]}" | awk '/^ROLE be/ {printf "%s%s", sep, $5; sep = "+"}')
    for i in "${beouts[@]}"; do grep -q "check ok" "$i" || check="$check BE-FAILED"; done
  fi
  local x="" share="" reqs
  reqs=$(awk '/^TORCH requests/ {print $3} /^ROLE ls/ {print $4}' "$lsout")
  [ -n "${p99:-}" ] && [ -n "$SOLO_REF" ] && x=$(awk -v a="$p99" -v b="$SOLO_REF" 'BEGIN {printf "%.2f", a / b}')
  [ -n "${be_rate:-}" ] && [ -n "$BE_SOLO" ] && share=$(awk -v a="$be_rate" -v b="$BE_SOLO" 'BEGIN {printf "%.2f", a / b}')
  echo "| $name | ${reqs:-} | ${p50:-} | ${p99:-} | ${x:-} | ${be_rate:-} | ${share:-} | ${mhz:-} | ${watts:-} | ${split:-} | ${lsbusy:-} | $check (rc $lsrc/$berc) |" >>"$OUT/processes.md"
  say "row $name: LS p50 ${p50:-?} us, p99 ${p99:-?} us (${x:-?}x solo, ${reqs:-?} requests${split:+, halves split $split}), BE ${be_rate:-?} tasks/s (${share:-?} of solo$([ "$procs" -gt 1 ] && echo ", processes $each"))${mhz:+, SM ${mhz} MHz, ${watts} W}, $check"
  LAST_P99=${p99:-} LAST_BE=${be_rate:-}
}
# The faults (PART=all, or PART=faults alone after LS's solo reference): the controller killed mid-run and
# restarted, a second controller refused, an LS and a BE process killed mid-run.
run_faults() {
  # ---- the fault: the controller killed mid-run, then restarted
  SOLO_REF=$MPS_SOLO_REF
  qosd_start --policy gate && {
    FAULT_CMD="sleep 3; \"$BIN/controller_fault\" \"$SEGMENT\" 500 -- \"$BIN/ptb-qosd\" run --device 0 --policy gate --mps use"
    LS_ENV="$MARK_ENV" row qosd-gate-fault "$LSK" follow PTB_QOSD=1
    FAULT_CMD=""
    say "fault: $(grep FAULT "$OUT/qosd-gate-fault.fault.log")"
    # a second controller on the same GPU is refused
    "$BIN/ptb-qosd" run --device 0 --policy gate >"$OUT/second.log" 2>&1 & second=$!
    sleep 2
    if kill -0 $second 2>/dev/null; then say "second controller: NOT refused (still running)"; kill $second
    else wait $second; say "second controller: refused, rc $?: $(head -2 "$OUT/second.log" | tr '\n' ' ')"; fi
    "$BIN/ptb-qosd" status --gpu "$GPU_KEY" >"$OUT/status.txt" 2>&1
    pkill -f "ptb-qosd run --device 0" 2>/dev/null
    qosd_stop
  }
  # ---- an LS process and a BE process killed mid-run: their entries are freed, nothing waits for them
  qosd_start --policy gate && {
    env "$MARK_ENV" python3 bench/colocate/ls_torch.py --model "$MODEL" --rate "$RATE" --secs 30 \
      >"$OUT/kill-ls.log" 2>&1 & lsp=$!
    PTB_QOSD=1 "$BIN/colocate" --role be --be-kind "$BE" --be-follow --settle 0.5 --secs 30 >"$OUT/kill-be.log" 2>&1 &
    bep=$!
    sleep 12
    { echo "both running:"; "$BIN/ptb-qosd" status --gpu "$GPU_KEY"
      kill -9 $lsp; sleep 0.5; echo "0.5 s after the LS process was killed:"; "$BIN/ptb-qosd" status --gpu "$GPU_KEY"
      kill -9 $bep; sleep 0.5; echo "0.5 s after the BE process was killed:"; "$BIN/ptb-qosd" status --gpu "$GPU_KEY"
    } >"$OUT/kill.txt" 2>&1
    wait $lsp $bep 2>/dev/null
    say "killed clients: $(grep -c 'is gone: its entry is freed' "$OUT/qosd.log") entries freed (qosd.log); status in kill.txt"
    qosd_stop
  }
}
FAULT_CMD="" SOLO_REF="" LS_ENV=""
{
  echo "# Cross-process co-location, $(date -u +%F), $(head -1 "$OUT/env.txt" 2>/dev/null)"
  echo
  if [ "$LSK" = torch ]; then
    echo "LS $MODEL (PyTorch, batch 1$([ -n "${EAGER:-}" ] && echo ", eager" || echo ", CUDA graph")) at $LOAD of its solo capacity; BE $BE (bench/colocate)."
  else
    echo "LS bench/colocate's client (${LS_ARGS:-its defaults}) at $LOAD of its solo capacity; BE $BE (bench/colocate)."
  fi
  echo
  echo "| row | LS requests | LS p50 (us) | LS p99 (us) | x solo p99 | BE tasks/s | BE share of solo | SM clock (MHz) | power (W) | LS p99 split | LS busy | checks |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
} >"$OUT/processes.md"

# The GPU's SM clock and power, sampled every 100 ms (CLOCKS=0: not), for each row's means: a BE that draws
# power lowers the clock LS then runs at.
CLK_PID=""
if [ "${CLOCKS:-1}" = 1 ] && command -v nvidia-smi >/dev/null; then
  nvidia-smi -i "${DEVICE:-0}" --query-gpu=clocks.sm,power.draw --format=csv,noheader,nounits -lms 100 2>/dev/null |
    while IFS= read -r l; do echo "$EPOCHREALTIME, $l"; done >"$OUT/clocks.csv" &
  CLK_PID=$!
fi
# ---- without MPS: capacity, solo rows, time-slicing
CAP=0
# CAPACITY=R: the PyTorch service's capacity (requests/s) from the caller, measured with nothing else running
# (two_gpus.sh measures each GPU in turn before its runs start together); otherwise measured here
if [ "$LSK" = torch ] && [ -n "${CAPACITY:-}" ]; then
  [[ $CAPACITY =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "processes.sh: CAPACITY=$CAPACITY: requests/s, a number" >&2; exit 2; }
  CAP=$CAPACITY
  say "LS $MODEL capacity $CAP requests/s from CAPACITY (the caller's measure)"
elif [ "$LSK" = torch ]; then
  CAP=$(timeout 120 python3 bench/colocate/ls_torch.py --model "$MODEL" ${EAGER:+--eager} --capacity | awk '/^TORCH capacity/ {print $3}')
fi
COLO_CAP=$(timeout 120 "$BIN/colocate" --role capacity ${LS_ARGS:-} | awk '/^ROLE capacity/ {print $3}')
RATE=$(awk -v c="$CAP" -v l="$LOAD" 'BEGIN {printf "%.1f", c * l}')
COLO_RATE=$(awk -v c="$COLO_CAP" -v l="$LOAD" 'BEGIN {printf "%.1f", c * l}')
say "LS $MODEL capacity $CAP requests/s -> rate $RATE; colocate's LS capacity $COLO_CAP -> $COLO_RATE"
# REQUESTS=N: the PyTorch rows' window long enough for N requests at this rate (in place of SECS; the goal's
# 20,000 took 43-47 s on the H200, more where the service is slower)
if [ -n "${REQUESTS:-}" ] && [ "$LSK" = torch ]; then
  [[ $REQUESTS =~ ^[0-9]+$ ]] || { echo "processes.sh: REQUESTS=$REQUESTS: a count of requests" >&2; exit 2; }
  SECS=$(awk -v n="$REQUESTS" -v r="$RATE" 'BEGIN {if (r <= 0) exit 1; s = n / r; printf "%d", (s == int(s) ? s : int(s) + 1) + 1}') ||
    { say "REQUESTS=$REQUESTS: no rate (the capacity was not measured)"; exit 1; }
  say "REQUESTS=$REQUESTS at $RATE requests/s: windows of $SECS s"
fi
REUSE_LS=0 NOMPS_REF="" MPS_SOLO_REF=""
if [ -n "${LS_REFS:-}" ] && [ "$PART" = goal ]; then
  read -r NOMPS_REF MPS_SOLO_REF <<<"$LS_REFS"
  [[ $NOMPS_REF =~ ^[0-9]+(\.[0-9]+)?$ && $MPS_SOLO_REF =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
    { echo "processes.sh: LS_REFS=$LS_REFS: two p99s in us, without and under MPS" >&2; exit 2; }
  REUSE_LS=1
  say "LS alone not run again: p99 $NOMPS_REF us without MPS, $MPS_SOLO_REF us under MPS (LS_REFS, the caller's)"
fi
if [ "${MPS_EXTERNAL:-0}" = 1 ]; then # the caller's daemon runs already: no row can go without MPS
  say "no time-slicing rows: MPS_EXTERNAL=1 (the caller's MPS daemon serves this GPU)"
elif [ "$PART" = faults ]; then
  say "PART=faults: LS alone under MPS, then the faults"
else
  # PART=goal: the time-slicing row too (the goal is measured in the same run), its references in windows of
  # TS_SECS (default 8) s
  sx=$SECS; [ "$PART" = goal ] && sx=${TS_SECS:-8}
  if [ $REUSE_LS = 1 ]; then SOLO_REF=$NOMPS_REF
  else SECS=$sx row no-mps-ls-solo "$LSK" none; SOLO_REF=$LAST_P99 NOMPS_REF=$LAST_P99; fi
  SECS=$sx row no-mps-be-solo none plain; BE_SOLO=$LAST_BE
  SECS=3 row time-slicing "$LSK" plain # LS waits for BE's time slices: a short window
fi

# ---- MPS (a private pipe directory; stopped at the end)
if [ "${MPS_EXTERNAL:-0}" = 1 ]; then # a daemon the caller started (CUDA_MPS_PIPE_DIRECTORY inherited)
  trap 'qosd_stop; [ -n "$CLK_PID" ] && kill "$CLK_PID"; rm -rf "$TMP"' EXIT
else
  export CUDA_MPS_PIPE_DIRECTORY="$(mktemp -d)" CUDA_MPS_LOG_DIRECTORY="$(mktemp -d)"
  if ! nvidia-cuda-mps-control -d >"$OUT/mps-start.log" 2>&1; then say "MPS: the daemon did not start"; exit 1; fi
  # The daemon was started with CUDA_VISIBLE_DEVICES=$DEVICE and sees that GPU alone; an MPS client's
  # CUDA_VISIBLE_DEVICES counts the daemon's GPUs, so its GPU is now device 0 (seen on the H200 x2,
  # 2026-11-29: DEVICE=1 clients found no GPU).
  [ -n "${DEVICE:-}" ] && export CUDA_VISIBLE_DEVICES=0
  trap 'qosd_stop; [ -n "$CLK_PID" ] && kill "$CLK_PID"; echo quit | nvidia-cuda-mps-control; rm -rf "$TMP"' EXIT
fi
SOLO_REF=""
if [ $REUSE_LS = 1 ]; then SOLO_REF=$MPS_SOLO_REF
else
  row mps-ls-solo "$LSK" none; SOLO_REF=$LAST_P99 MPS_SOLO_REF=$LAST_P99 # (the later PyTorch rows' reference)
  [ -n "$NOMPS_REF" ] && [ -n "$MPS_SOLO_REF" ] && echo "$CAP $NOMPS_REF $MPS_SOLO_REF" >"$OUT/ls-refs.txt"
fi
if [ "$PART" = faults ]; then run_faults; say "done in $(( $(date +%s) - T0 )) s"; cat "$OUT/processes.md"; exit 0; fi
# TRACE=1 too: LS alone with libptb-ls preloaded, as it runs in the controller rows (attribute.py --solo its dump)
if [ "$PART" = all ] || [ "${TRACE:-0}" = 1 ]; then
  LS_ENV="LD_PRELOAD=$LSLIB" row mps-ls-solo-preloaded "$LSK" none
  # ... and with a controller up, so that its launches are marked (with no controller libptb-ls marks nothing):
  # what the marks cost LS, BE absent
  LS_ENV="$MARK_ENV" qosd_row "--policy gate --poll-us 5" mps-ls-solo-marked "$LSK" none
fi
if [ "$PART" = all ]; then
  LS_ENV="CUDA_INJECTION64_PATH=$LSLIB" row mps-ls-solo-injected "$LSK" none
fi
# PART=goal: BE's solo rate (a steady rate, not a tail) in a window of TS_SECS too
bx=$SECS; [ "$PART" = goal ] && bx=${TS_SECS:-8}
SECS=$bx row mps-be-solo none plain; BE_SOLO=$LAST_BE
[ "$PART" = all ] && row mps-be100 "$LSK" plain
if [ "$PART" = frontier ]; then # each peer along its knob: MPS's thread percentage, a green context's SMs
  # LS alone with part of the GPU (MPS's thread percentage): the smallest share that keeps it within a
  # tolerance gives the spatial bound on BE's share (frontier.py)
  for pct in ${LS_PCTS:-50 75 90}; do LS_ENV="CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct" row mps-ls$pct "$LSK" none; done
  for pct in ${MPS_PCTS:-10 25 50 75}; do row mps-be$pct "$LSK" plain CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct; done
  for k in ${GREENS:-16 32 48 64 96}; do BE_ARGS="--green-sms $k" row green-be$k "$LSK" plain; done
  # the vendor-only gate: ptb-qosd's gate and LS marks, BE's original kernels moved between the whole GPU and a
  # green context of K SMs at kernel boundaries (colocate --green-gate K)
  for k in ${GREEN_GATES:-8 16 32}; do
    LS_ENV="$MARK_ENV" BE_ARGS="--green-gate $k" qosd_row "--policy gate --poll-us 5" green-gate$k "$LSK" plain
  done
  GATES=${GATES:-"gate --poll-us 5|gate --poll-us 5 --between-per-sm 3|gate --poll-us 5 --between-after-us 200|gate --poll-us 5 --between-per-sm 3 --between-after-us 100|gate --poll-us 5 --between-per-sm 3 --between-after-us 200|static --be-sms 66 --poll-us 5|static --be-sms 33 --poll-us 5"}
  TWO_BE=${TWO_BE:-0} COLO=${COLO:-0}
else
  # PART=goal with LS_PCTS: LS alone at those MPS thread percentages (TS_SECS windows), the references of gate
  # rows that limit LS's process (LS.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE in GATES)
  for pct in ${LS_PCTS:-}; do
    SECS=$bx LS_ENV="CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct" row mps-ls$pct "$LSK" none
  done
  row mps-be25 "$LSK" plain CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25
fi
# MPS client priorities (CUDA_MPS_CLIENT_PRIORITY: 0 normal, 1 below normal; ignored by a driver without them)
if [ "$PART" = all ]; then
  row mps-be100-prio1 "$LSK" plain CUDA_MPS_CLIENT_PRIORITY=1
  row mps-be25-prio1 "$LSK" plain CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25 CUDA_MPS_CLIENT_PRIORITY=1
fi
# the cost of following (twins on every SM): PART=goal too, in a TS_SECS window, as the twin's rate over the plain
# one bounds a gated BE's share with LS's busy fraction (compute's twin: 0.93 on the H200, 2026-11-29)
# OFFS: "|"-separated BE environments, one such row each ("" the default: the runtime's defaults), e.g.
# OFFS="|PTB_CHECK_CYCLES=262144": the twin's rate with fewer checks beside its default one
if [ "$PART" = all ] || [ "$PART" = goal ]; then
  IFS='|' read -r -a offs <<<"${OFFS:-}"
  [ ${#offs[@]} = 0 ] && offs=("")
  for oenv in "${offs[@]}"; do
    read -r -a oe <<<"$oenv"
    oname=qosd-off-be-solo
    for w in "${oe[@]}"; do oname+="-${w//=/-}"; done
    SECS=$bx qosd_row "--policy off" "$oname" none follow PTB_QOSD=1 "${oe[@]}"
  done
fi
# The gate through the controller; poll5: the controller and the BE link poll every 5 us instead of 20.
GATES=${GATES:-"gate|gate --between-per-sm 2|gate --poll-us 5|gate --between-per-sm 2 --poll-us 5"}
IFS='|' read -r -a gates <<<"$GATES"
for spec in "${gates[@]}"; do
  # "OPTIONS : VAR=VALUE ...": the words after ":" go to BE's environment, those written LS.VAR=VALUE to LS's
  # (e.g. LS.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=94: the service's process limited by MPS, unchanged otherwise)
  pol=${spec%%:*} words=() benv=() lenv=()
  [[ $spec == *:* ]] && read -r -a words <<<"${spec#*:}"
  for w in "${words[@]}"; do if [[ $w == LS.* ]]; then lenv+=("${w#LS.}"); else benv+=("$w"); fi; done
  name="qosd-$(echo "$pol" | tr -d ' ' | sed 's/--/-/g')$(printf -- '-%s' "${words[@]}" | tr -d ' ' | tr = -)"
  [ ${#words[@]} = 0 ] && name=${name%-}
  poll=$(sed -n 's/.*--poll-us \([0-9][0-9]*\).*/\1/p' <<<"$pol"); poll=${poll:-20} # BE polls as the controller
  LS_ENV="$MARK_ENV ${lenv[*]}" qosd_row "--policy $pol" "$name" "$LSK" follow PTB_QOSD=1 PTB_QOSD_POLL_US=$poll "${benv[@]}"
done
# Two BE processes under the gate: BE's room shared by both, or split between them (be_share).
if [ "${TWO_BE:-1}" = 1 ]; then
  for share in shared split; do
    BE_PROCS=2 LS_ENV="$MARK_ENV" qosd_row "--policy gate --poll-us 5 --be-share $share" qosd-gate-2be-$share "$LSK" \
      follow PTB_QOSD=1 PTB_QOSD_POLL_US=5
  done
fi
if [ "${COLO:-1}" = 1 ]; then
  # bench/colocate's own LS client across processes, and the same in one process (the in-process gate)
  SOLO_REF=""
  SECS=$COLO_SECS row mps-colo-ls-solo colo none; SOLO_REF=$LAST_P99
  for poll in 20 5; do
    SECS=$COLO_SECS LS_ENV="$MARK_ENV" qosd_row "--policy gate --poll-us $poll" qosd-gate-colo-ls-poll$poll colo follow \
      PTB_QOSD=1 PTB_QOSD_POLL_US=$poll
  done
  mkdir -p "$OUT/inprocess"
  timeout 200 "$BIN/colocate" --be "$BE" --configs gate --loads "$LOAD" --reps 1 --secs "$COLO_SECS" --no-trace ${LS_ARGS:-} --out "$OUT/inprocess" \
    >"$OUT/inprocess.log" 2>&1
  say "in-process (one process, the same LS client and BE; inprocess/colocate.md):"
  grep -E 'gate|ls-alone|be-alone' "$OUT/inprocess/colocate.md" 2>/dev/null | head -12 | tee -a "$LOG"
fi
if [ "$PART" = frontier ]; then # the table of BE share at each LS p99 tolerance, and the picture
  python3 bench/colocate/frontier.py "$OUT/processes.md" --png "$OUT/frontier.png" >"$OUT/frontier.md" 2>>"$LOG"
  tee -a "$LOG" <"$OUT/frontier.md"
fi
if [ "$PART" != all ] || [ "${FAULTS:-1}" = 0 ]; then say "done in $(( $(date +%s) - T0 )) s"; cat "$OUT/processes.md"; exit 0; fi
run_faults
say "done in $(( $(date +%s) - T0 )) s"
cat "$OUT/processes.md"
