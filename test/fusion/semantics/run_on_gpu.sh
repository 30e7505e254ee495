#!/usr/bin/env bash
# On the GPU machine: builds test/fusion/semantics/check.cu once per fusion of the outputs of
# test/fusion/semantics/transform.sh (in parallel, JOBS at once), then runs each check.
#   bash test/fusion/semantics/run_on_gpu.sh [--compile-only] [--only NAME_REGEX] [GENERATED_DIR] [-- check args]
# --compile-only (CI without a GPU): builds every check and runs nothing; a build with a warning fails.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
. test/gpu/lib.sh
NVCC="$(ptb_nvcc)" || exit 1
ONLY="."; COMPILE_ONLY=0; GEN=build/fusion-semantics; EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --compile-only) COMPILE_ONLY=1 ;;
    --only) ONLY="$2"; shift ;;
    --) shift; EXTRA=("$@"); break ;;
    *) GEN="$1" ;;
  esac
  shift
done
if [ ! -f "$GEN/fusions.list" ]; then
  echo "error: $GEN/fusions.list not found; run test/fusion/semantics/transform.sh first"
  exit 1
fi
BIN="${GEN}-bin"
mkdir -p "$BIN"
S=test/fusion/semantics
pass=0; fail=0
build() {  # name output kernel...
  local name="$1" output="$2"; shift 2
  local defs=() i=0
  for k in "$@"; do defs+=("-DP$i=${k}_problem"); i=$((i + 1)); done
  "$NVCC" -arch=sm_90 -std=c++17 -O2 -lineinfo -I runtime/include -I "$GEN" -I "$S" \
    -DFUSED="\"$output\"" -DFUSION="$name" "${defs[@]}" "$S/check.cu" -o "$BIN/$name" >"$BIN/$name.build.log" 2>&1 || return 1
  # nvcc prints warnings but succeeds: count them as failures too.
  if grep -qi 'warning' "$BIN/$name.build.log"; then rm -f "$BIN/$name"; return 1; fi
}
# At most JOBS builds at once (default: the number of cores; more only share the cores and the caches).
JOBS="${JOBS:-$(nproc)}"
while read -r name output kernels; do
  echo "$name" | grep -Eq "$ONLY" || continue
  rm -f "$BIN/$name"
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  # shellcheck disable=SC2086
  build "$name" "$output" $kernels &
done <"$GEN/fusions.list"
wait
while read -r name output kernels; do
  echo "$name" | grep -Eq "$ONLY" || continue
  if [ ! -x "$BIN/$name" ]; then echo "$name: BUILD FAILED"; cat "$BIN/$name.build.log"; fail=$((fail + 1)); continue; fi
  if [ "$COMPILE_ONLY" = 1 ]; then echo "$name: built"; pass=$((pass + 1)); continue; fi
  if timeout 120 "$BIN/$name" "${EXTRA[@]}"; then pass=$((pass + 1)); else echo "$name: FAILED (exit $?)"; fail=$((fail + 1)); fi
done <"$GEN/fusions.list"
echo "semantics: $pass passed, $fail failed"
[ "$fail" = 0 ]
