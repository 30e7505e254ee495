#!/usr/bin/env bash
# The intra-SM unit probe (issue 17, item 3), on the GPU machine, from the repository root:
#
#   bash bench/unit_probe/run_on_gpu.sh [--compile-only [DIR]] [-- unit_probe options]
#
# Builds bench/unit_probe/unit_probe.cu (nvcc -O3 -std=c++17 -arch=sm_90), counts the SASS instructions
# each loop should be made of (cuobjdump, when the toolkit has it), runs the probe twice and compares the
# two tables (the goal: every overlap within 0.05 of the other run's). Everything goes to $OUT (default
# build/unit-probe-out) as it comes: run.log (all that is printed), unit_probe.sass, run1/ and run2/ (each
# overlap.tsv, overlap.png, probe.txt). GIT_COMMIT, when set, is printed as the commit (the GPU machine's
# copy may have no .git). Wall clock: about 1 minute; each step is killed if it overruns.
# --compile-only: build into DIR (default build/unit-probe-ci) with warnings as errors and stop (CI).
set -u
cd "$(dirname "$0")/../.."
COMPILE_ONLY=0 BIN="" ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --compile-only) COMPILE_ONLY=1; if [ $# -gt 1 ] && [ "${2#-}" = "$2" ]; then BIN="$2"; shift; fi ;;
    --) shift; ARGS=("$@"); break ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
. test/gpu/lib.sh
NVCC="$(ptb_nvcc)" || exit 1
FLAGS=(-O3 -std=c++17 -arch=sm_90 -lineinfo)

if [ $COMPILE_ONLY = 1 ]; then
  BIN="${BIN:-build/unit-probe-ci}"
  mkdir -p "$BIN"
  exec "$NVCC" "${FLAGS[@]}" -Xcompiler -Wall,-Wextra -Werror all-warnings bench/unit_probe/unit_probe.cu -o "$BIN/unit_probe"
fi

OUT="${OUT:-build/unit-probe-out}"
mkdir -p "$OUT/run1" "$OUT/run2"
exec > >(tee -a "$OUT/run.log") 2>&1
T0=$(date +%s)
echo "== unit probe: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "commit: ${GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
"$NVCC" --version | tail -1 | sed 's/^/nvcc: /'

BIN="${UNIT_PROBE_BIN:-build/unit-probe-bin}"
mkdir -p "$BIN"
echo "== build"
timeout 240 "$NVCC" "${FLAGS[@]}" -Xptxas -v bench/unit_probe/unit_probe.cu -o "$BIN/unit_probe" 2>&1 | grep -E "error|warning|registers|spill" || true
[ -x "$BIN/unit_probe" ] || { echo "ERROR: the build failed"; exit 1; }

# The instructions the loops are made of, over the whole kernel (all seven bodies and both INT32 ones):
# FFMA ~128, DFMA 128, MUFU 96 (+ FMUL ~32 for the sines), HMMA 32, IADD3 ~128 and IMAD ~128 (the two
# INT32 bodies), LOP3 ~256 + the xors of LDST and SHMEM, LDG 16, STG 1 + a few, LDS 16, STS 4.
CUOBJDUMP="$(dirname "$NVCC")/cuobjdump"
[ -x "$CUOBJDUMP" ] || CUOBJDUMP="$(command -v cuobjdump || true)"
if [ -n "$CUOBJDUMP" ]; then
  "$CUOBJDUMP" -sass "$BIN/unit_probe" > "$OUT/unit_probe.sass" 2>&1
  echo "== SASS opcodes (count)"
  grep -oE '^ +/\*[0-9a-f]{4,}\*/ +(@!?U?P[0-9T] +)?[A-Z][A-Z0-9]*' "$OUT/unit_probe.sass" | awk '{print $NF}' |
    sort | uniq -c | sort -rn | grep -wE 'FFMA|FMUL|IMAD|IADD3|LOP3|DFMA|MUFU|HMMA|LDG|STG|LDS|STS' | tr '\n' ' '
  echo
else
  echo "== SASS: cuobjdump not found, skipped"
fi

for r in 1 2; do
  echo "== run $r"
  timeout 150 "$BIN/unit_probe" --out "$OUT/run$r" ${ARGS[@]+"${ARGS[@]}"} | tee "$OUT/run$r/probe.txt"
  rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || { echo "ERROR: run $r exited with $rc"; exit 1; }
done
echo "== run 1 against run 2"
"$BIN/unit_probe" --compare "$OUT/run1/overlap.tsv" "$OUT/run2/overlap.tsv"
echo "== done in $(( $(date +%s) - T0 )) s; outputs in $OUT"
