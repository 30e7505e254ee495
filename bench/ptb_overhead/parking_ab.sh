#!/usr/bin/env bash
# The parking programs of the corpus (early_return_before_barrier_*) as twins, with two runtimes, in one
# call on the GPU machine (repository root; carry build/gpu-transformed and .device-carry/old):
#
#   bash bench/ptb_overhead/parking_ab.sh [ROUNDS]
#
# B is the runtime in .device-carry/old/runtime/include (e.g. `git archive <commit> runtime/include | tar -x
# -C .device-carry/old`), A the tree's runtime/include. For each program: the original build and the
# transformed build against A and against B (nvcc -std=c++17 -O2 -arch=sm_90 -lineinfo, as
# test/gpu/run_on_gpu.sh); correctness of A's build as twins (PTB_MODE=ptb) and confined (PTB_SMS=0-65);
# compute-sanitizer memcheck, racecheck and synccheck on A's build as twins (all at once, 150 s each); then ROUNDS (default 5)
# rounds of --whole (test/gpu/common.cuh) with orig, twin-A and twin-B alternating, and the medians.
# Output on stdout (and $OUT/parking-ab.txt when $OUT is set). Exit status 1 when a check failed.
set -u
cd "$(dirname "$0")/../.."
ROUNDS=${1:-5}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
SAN=${SAN:-/usr/local/cuda/bin/compute-sanitizer}
[ -x "$SAN" ] || SAN=compute-sanitizer
F=(-std=c++17 -O2 -arch=sm_90 -lineinfo)
B=build/parking-ab
mkdir -p "$B"
REP="${OUT:-$B}/parking-ab.txt"
: >"$REP"
say() { echo "$@" | tee -a "$REP"; }
[ -d .device-carry/old/runtime/include ] || { echo "ERROR: .device-carry/old/runtime/include is missing" >&2; exit 2; }
NAMES="early_return_before_barrier_loop early_return_before_barrier_reduce early_return_before_barrier_stencil"
say "== $(date -u '+%F %T') UTC; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
for n in $NAMES; do
  "$NVCC" "${F[@]}" -I test/gpu "test/gpu/$n.cu" -o "$B/$n.orig" &
  "$NVCC" "${F[@]}" -I runtime/include -I test/gpu "build/gpu-transformed/$n.cu" -o "$B/$n.A" &
  "$NVCC" "${F[@]}" -I .device-carry/old/runtime/include -I test/gpu "build/gpu-transformed/$n.cu" -o "$B/$n.B" &
done
wait
FAILED=0
# synccheck_only_call_sites LOG: whether every synccheck error is the known call-site report
eval "$(sed -n '/^synccheck_only_call_sites() {/,/^}/p' test/gpu/stress/confine_and_sanitize.sh)"
for n in $NAMES; do
  for v in orig A B; do [ -x "$B/$n.$v" ] || { say "BUILD FAILED $n.$v"; FAILED=1; }; done
done
[ $FAILED = 0 ] || exit 1
for n in $NAMES; do
  for e in "PTB_MODE=ptb" "PTB_SMS=0-65"; do
    r=$(env $e timeout 60 "$B/$n.A" 2>&1 | tail -1)
    say "check $n A [$e]: $r"
    [[ "$r" == "PASS $n" ]] || FAILED=1
  done
done
# the sanitizer runs, all at once (each within 150 s)
for n in $NAMES; do
  for tool in memcheck racecheck synccheck; do
    PTB_MODE=ptb timeout 150 "$SAN" --tool $tool "$B/$n.A" >"$B/san-$n-$tool.txt" 2>&1 &
  done
done
wait
for n in $NAMES; do
  for tool in memcheck racecheck synccheck; do
    f="$B/san-$n-$tool.txt"
    r=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^PASS|^FAIL" "$f" | head -3 | tr '\n' ' ')
    if [[ "$r" == *"PASS $n"* ]] && [[ "$r" == *" 0 error"* || "$r" == *" 0 hazard"* ]]; then
      say "sanitize $n A $tool: PASS ($r)"
    elif [ $tool = synccheck ] && synccheck_only_call_sites "$f"; then
      # synccheck's report of the parking twins' one barrier reached from several call sites, legal in PTX
      # (docs/user/ptb-transform.md, "Parking"; test/gpu/stress/confine_and_sanitize.sh counts it the same way)
      say "sanitize $n A $tool: KNOWN (only the task_barrier call-site report; the program then fails, as expected)"
    else
      say "sanitize $n A $tool: FAIL (${r:-no summary: $(tail -1 "$f")})"
      FAILED=1
    fi
  done
done
RAW="$B/raw.txt"
: >"$RAW"
for r in $(seq 1 "$ROUNDS"); do
  for n in $NAMES; do
    for v in orig A B; do
      if [ $v = orig ]; then l=$(env -u PTB_MODE "$B/$n.$v" --whole | grep "^WHOLE"); else l=$(PTB_MODE=ptb "$B/$n.$v" --whole | grep "^WHOLE"); fi
      echo "$v $l" >>"$RAW"
    done
  done
done
say "$(printf '%-38s %10s %10s %10s %8s %8s' program 'orig ms' 'twin A ms' 'twin B ms' 'A/orig' 'B/orig')"
awk '{ k = $1 " " $3; v[k, ++c[k]] = $7 }
     function med(k,   n, i, j, t, a) { n = c[k]; for (i = 1; i <= n; i++) a[i] = v[k, i]
       for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
       return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
     END { split("early_return_before_barrier_loop early_return_before_barrier_reduce early_return_before_barrier_stencil", N, " ")
       for (i = 1; i <= 3; i++) { o = med("orig " N[i]); a = med("A " N[i]); b = med("B " N[i])
         printf "%-38s %10.4f %10.4f %10.4f %8.4f %8.4f\n", N[i], o, a, b, a / o, b / o } }' "$RAW" | tee -a "$REP"
say "(medians of $ROUNDS whole-program runs each: test/gpu --whole, 28 launch units, first launch included; twins with PTB_MODE=ptb)"
[ -n "${OUT:-}" ] && cp "$RAW" "$OUT/parking-ab-raw.txt"
exit $FAILED
