#!/usr/bin/env bash
# test/gpu/ls/run.sh: builds libptb-ls.so and ls_probe with g++/nvcc only (no CMake, no LLVM) and checks the
# library on a GPU: the probe's checks with the library preloaded (LD_PRELOAD: interposed entry points) and
# injected (CUDA_INJECTION64_PATH: CUPTI), the line said when no controller runs, and what marking costs
# (tiny launches without the library and with it either way). Prints PASS/FAIL lines; exit 1 on a failure.
#   bash test/gpu/ls/run.sh [OUT_DIR]                 (OUT_DIR default /tmp/ptb-ls-gpu)
#   bash test/gpu/ls/run.sh --compile-only [OUT_DIR]  builds both and stops (CI: no GPU needed)
# CUDA: $CUDA_HOME (default /usr/local/cuda); NVCC_ARCH (default sm_90: H100/H200).
set -uo pipefail
cd "$(dirname "$0")/../../.."
compile_only=0
if [ "${1:-}" = "--compile-only" ]; then compile_only=1; shift; fi
out="${1:-/tmp/ptb-ls-gpu}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
arch="${NVCC_ARCH:-sm_90}"
mkdir -p "$out"
fail=0
say() { echo "$*"; }

# CUPTI is in lib64 (CUDA 12.x/13.x) or extras/CUPTI/lib64 (older layouts); the library opens it at run
# time when injected. libcuda is linked against the toolkit's stub and resolved to the driver's at run time.
cupti_dir="$cuda/lib64"
[ -e "$cupti_dir/libcupti.so" ] || cupti_dir="$cuda/extras/CUPTI/lib64"
set -x
g++ -std=c++17 -shared -fPIC -O2 -fvisibility=hidden -Wall -Wextra -I runtime/include -I runtime/ls \
  -I "$cuda/include" -DPTB_LS_CUPTI_LIBRARY="\"$cupti_dir/libcupti.so\"" runtime/ls/ptb_ls.cpp runtime/ls/interpose.cpp \
  -L "$cuda/lib64/stubs" -lcuda -lpthread -ldl -o "$out/libptb-ls.so" || exit 1
"${NVCC:-$cuda/bin/nvcc}" -O2 -Werror all-warnings -std=c++17 -arch="$arch" -I runtime/include -I runtime/ls test/gpu/ls/ls_probe.cu \
  -o "$out/ls_probe" -ldl -lpthread || exit 1
set +x
lib="$out/libptb-ls.so"
if [ "$compile_only" = 1 ]; then
  nm -D --defined-only "$lib" | grep -q ' T InitializeInjection$' || { say "FAIL: $lib lacks InitializeInjection"; exit 1; }
  say "PASS: libptb-ls.so (g++) and ls_probe (nvcc) build"
  exit 0
fi

# 1. The checks, the library preloaded and injected.
for with in LD_PRELOAD CUDA_INJECTION64_PATH; do
  env PTB_LS_VERBOSE=1 "$with=$lib" "$out/ls_probe" --check 2>&1 | tee "$out/check-$with.log"
  if [ "${PIPESTATUS[0]}" = 0 ]; then say "PASS: the probe's checks with $with"; else say "FAIL: the probe's checks with $with"; fail=1; fi
done
if grep -q "interposed: launches are marked without CUPTI" "$out/check-LD_PRELOAD.log"; then
  say "PASS: preloaded, the launches reach the interposed entry points"
else
  say "FAIL: preloaded, no entry point was interposed"; fail=1
fi
key=$(sed -n 's/^ls_probe: key \([^,]*\),.*/\1/p' "$out/check-LD_PRELOAD.log" | head -1)
# 2. No controller: one line, and the program runs on.
empty=$(mktemp -d)
PTB_QOSD_DIR="$empty" LD_PRELOAD="$lib" "$out/ls_probe" --none >"$out/none.log" 2>&1
rc=$?
cat "$out/none.log"
if [ "$rc" = 0 ] && [ "$(grep -c '^ptb-ls: no controller for GPU-' "$out/none.log")" = 1 ]; then
  say "PASS: without a segment the library says so once and the program runs (rc 0)"
else
  say "FAIL: without a segment: rc $rc, expected one 'ptb-ls: no controller for GPU-' line"; fail=1
fi
rmdir "$empty" 2>/dev/null

# 3. What marking costs: N tiny launches back to back, without and with the library.
n="${LS_BENCH_LAUNCHES:-20000}"
"$out/ls_probe" --bench "$n" | tee "$out/bench.log" || fail=1
echo "preloaded:" | tee -a "$out/bench.log"
LD_PRELOAD="$lib" "$out/ls_probe" --bench "$n" | tee -a "$out/bench.log" || fail=1
echo "injected (CUPTI):" | tee -a "$out/bench.log"
CUDA_INJECTION64_PATH="$lib" "$out/ls_probe" --bench "$n" | tee -a "$out/bench.log" || fail=1

[ "$fail" = 0 ] && say "ls run.sh: PASS" || say "ls run.sh: FAIL"
exit "$fail"
