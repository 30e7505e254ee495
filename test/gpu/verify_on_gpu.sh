#!/usr/bin/env bash
# On the GPU machine (repository root): the checks that prove a change to generated code or to the
# runtime, in phases that fit the device's 10-minute calls, with everything bundled for the way back.
#
#   [COMMIT=<hash>] bash test/gpu/verify_on_gpu.sh PHASE...
#
# (COMMIT names the commit in the summary where the copy on the GPU machine has no .git.)
# Phases (each one builds what it needs, so a call on a fresh machine works):
#   corpus     test/gpu/run_on_gpu.sh: every corpus program, original and transformed (twins, PTB_MODE=ptb)
#   confine    the transformed corpus under 5 SM sets and caps (confine_and_sanitize.sh --confine-only;
#              uses the corpus phase's builds: name corpus first)
#   runtime    test/gpu/runtime/run_on_gpu.sh test_basic test_dispatch test_policy test_qos_feedback
#   programs   bench/programs/run_on_gpu.sh (whole-program cost, issue 13; BUDGET_S=${PROGRAMS_BUDGET_S:-200})
#   stress     test/gpu/stress/run_on_gpu.sh (wavefront under 7 policies, the random stress test)
#   fusion     test/fusion/semantics/run_on_gpu.sh (fused kernels against their originals)
#   examples   test/gpu/examples/run_on_gpu.sh (scale-app and saxpy as a user builds them, confined and not)
#   sanitize   compute-sanitizer memcheck/racecheck/synccheck (confine_and_sanitize.sh --sanitize-only;
#              needs the corpus, stress and, when present, the fusion builds: name those phases first)
# Needs, carried from the development machine: build/gpu-transformed (test/gpu/transform.sh),
# build/bench-programs (bench/programs/transform.sh), build/fusion-semantics (test/fusion/semantics/transform.sh),
# build/examples-transformed (test/gpu/examples/transform.sh).
# Writes $OUT/verify.txt (each phase's summary: the last lines of its output, its exit status and its
# seconds) and $OUT/verify-logs.tgz (every phase's whole output and logs): two files, under the device's
# limit on what comes back. Exit status: 0 when every phase passed.
set -u
cd "$(dirname "$0")/../.."
FINAL_OUT="${OUT:-out}"
mkdir -p "$FINAL_OUT"
WORK="$(mktemp -d)"
SUMMARY="$FINAL_OUT/verify.txt"
{
  echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')}"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
  /usr/local/cuda/bin/nvcc --version 2>&1 | tail -1
} > "$SUMMARY"
rc_all=0
phase() {  # phase NAME TAIL_LINES COMMAND...
  local name=$1 tailn=$2; shift 2
  local dir="$WORK/$name" t0=$SECONDS
  mkdir -p "$dir"
  OUT="$dir" "$@" > "$dir/output.txt" 2>&1
  local rc=$?
  [ $rc = 0 ] || rc_all=1
  {
    echo; echo "== $name: rc=$rc, $((SECONDS - t0)) s"
    # the failures wherever they are in the output, then its last lines
    [ $rc = 0 ] || grep -E "FAIL|TIMEOUT|NOBUILD|HANG|error" "$dir/output.txt" | head -20 | sed 's/^/failure: /'
    tail -n "$tailn" "$dir/output.txt"
  } >> "$SUMMARY"
  echo "== $name: rc=$rc, $((SECONDS - t0)) s"
  tar czf "$FINAL_OUT/verify-logs.tgz" -C "$WORK" . 2>/dev/null  # after each phase: a call cut short keeps them
}
for p in "$@"; do
  case "$p" in
    corpus)   phase corpus 16 bash test/gpu/run_on_gpu.sh build/gpu-transformed ;;
    confine)  phase confine 12 bash test/gpu/stress/confine_and_sanitize.sh --confine-only --jobs 8 ;;
    runtime)  phase runtime 34 bash test/gpu/runtime/run_on_gpu.sh test_basic test_dispatch test_policy test_qos_feedback ;;
    programs) phase programs 16 env BUDGET_S="${PROGRAMS_BUDGET_S:-200}" bash bench/programs/run_on_gpu.sh ;;
    stress)   phase stress 40 bash test/gpu/stress/run_on_gpu.sh ;;
    fusion)   phase fusion 12 bash test/fusion/semantics/run_on_gpu.sh ;;
    examples) phase examples 40 bash test/gpu/examples/run_on_gpu.sh ;;
    sanitize) phase sanitize 24 bash test/gpu/stress/confine_and_sanitize.sh --sanitize-only --jobs 12 ;;
    *) echo "unknown phase $p" >&2; rc_all=1 ;;
  esac
done
tar czf "$FINAL_OUT/verify-logs.tgz" -C "$WORK" . 2>/dev/null
cat "$SUMMARY"
exit $rc_all
