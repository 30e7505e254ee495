#!/usr/bin/env bash
# NVIDIA's eigenvalues sample (test/third_party/cuda-samples), a public multi-file program, transformed and
# run on the GPU beside its original build.
#   bash test/gpu/eigenvalues.sh prepare DIR   here (needs ptb-transform): the four sources transformed into DIR
#   bash test/gpu/eigenvalues.sh run DIR       on the GPU machine (nvcc): builds both, runs, exit 0 when all pass
# The checks: the default run's self-check against data/reference.dat (the large-matrix path), original and
# transformed, unconfined, confined (PTB_SMS, PTB_STRICT=1: a fallback fails it) and with one block per SM;
# then a random small size (the small-matrix path) and a random large size, each written to a result file
# that must equal the original's byte for byte; the transformed program under compute-sanitizer memcheck.
set -euo pipefail
cd "$(dirname "$0")/../.."
. test/gpu/lib.sh
EIG=test/third_party/cuda-samples/Samples/2_Concepts_and_Techniques/eigenvalues
COMMON=test/third_party/cuda-samples/Common
SOURCES=(bisect_large bisect_small bisect_util main)
mode="${1:?prepare or run}"
DIR="${2:?directory}"

if [ "$mode" = prepare ]; then
  PTB_TRANSFORM="${PTB_TRANSFORM:-$(ptb_tool ptb-transform)}"
  [ -n "$PTB_TRANSFORM" ] || { echo "eigenvalues.sh: no ptb-transform built (set PTB_TRANSFORM)" >&2; exit 1; }
  rm -rf "$DIR" && mkdir -p "$DIR/ptb"
  inputs=()
  for f in "${SOURCES[@]}"; do inputs+=("$EIG/$f.cu"); done
  "$PTB_TRANSFORM" --quiet "${inputs[@]}" --output-dir "$DIR/ptb" -- -I"$COMMON" -std=c++17
  ls "$DIR/ptb"/*.cu > /dev/null
  exit 0
fi
[ "$mode" = run ] || { echo "eigenvalues.sh: unknown mode '$mode'" >&2; exit 2; }

NVCC="$(ptb_nvcc)"
ARCH="${ARCH:-sm_90}"
DIR="$(cd "$DIR" && pwd)"
B="$DIR/bin"
mkdir -p "$B"
build() {  # build NAME SOURCE_DIR
  local name=$1 src=$2 objs=()
  for f in "${SOURCES[@]}"; do
    "$NVCC" -O2 -std=c++17 -arch="$ARCH" -rdc=true -lineinfo -I runtime/include -I"$COMMON" -I"$EIG" \
      -c "$src/$f.cu" -o "$B/$name-$f.o" >> "$B/build.log" 2>&1 || { tail -30 "$B/build.log"; exit 1; }
    objs+=("$B/$name-$f.o")
  done
  "$NVCC" -O2 -std=c++17 -arch="$ARCH" -rdc=true -I"$COMMON" "${objs[@]}" "$EIG/gerschgorin.cpp" "$EIG/matlab.cpp" \
    -o "$B/$name" >> "$B/build.log" 2>&1 || { tail -30 "$B/build.log"; exit 1; }
}
build original "$EIG"
build transformed "$DIR/ptb"
cp "$EIG"/data/*.dat "$B/"

fails=0
echo "device: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
check() {  # check LABEL ENV... -- ARGS...: runs in $B, passes when the program says "Test Succeeded!"
  local label=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local out rc=0
  out=$(cd "$B" && env "${envs[@]}" timeout 120 "$@" 2>&1) || rc=$?
  if [ $rc = 0 ] && grep -q 'Test Succeeded!' <<<"$out" && ! grep -q '^ptb: warning' <<<"$out"; then echo "ok   $label"
  else echo "FAIL $label (rc=$rc): $(tail -3 <<<"$out")"; fails=$((fails + 1)); fi
}
check "original, self-check" X=1 -- ./original
check "transformed unconfined, self-check" X=1 -- ./transformed
check "transformed PTB_SMS=0-7, self-check" PTB_SMS=0-7 PTB_STRICT=1 -- ./transformed
check "transformed PTB_SMS=3, self-check" PTB_SMS=3 PTB_STRICT=1 -- ./transformed
check "transformed PTB_SMS=0-65 one block per SM, self-check" PTB_SMS=0-65 PTB_BLOCKS_PER_SM=1 PTB_STRICT=1 -- ./transformed

small=$((16 + RANDOM % 497))     # 16..512: the small-matrix path
large=$((513 + RANDOM % 5000))   # the large-matrix path
sized() {  # sized LABEL RESULT ENV... -- ARGS...: a run whose result file (eigenvalues.dat) is kept as RESULT
  local label=$1 result=$2; shift 2
  rm -f "$B/eigenvalues.dat"
  check "$label" "$@"
  if [ -f "$B/eigenvalues.dat" ]; then mv "$B/eigenvalues.dat" "$B/$result"; fi
}
# (--filename-result is not used: the sample copies it into a buffer one byte short.)
for size in $small $large; do
  sized "original --matrix-size=$size" original-$size.dat X=1 -- ./original --matrix-size=$size
  sized "original --matrix-size=$size again" original-$size-again.dat X=1 -- ./original --matrix-size=$size
  if ! cmp -s "$B/original-$size.dat" "$B/original-$size-again.dat"; then
    echo "FAIL the original is not deterministic at size $size: no reference"; fails=$((fails + 1)); continue
  fi
  for envs in "X=1" "PTB_SMS=0-7 PTB_STRICT=1" "PTB_SMS=10-20 PTB_BLOCKS_PER_SM=1 PTB_STRICT=1"; do
    tag=$(tr ' =' '__' <<<"$envs")
    # shellcheck disable=SC2086
    sized "transformed --matrix-size=$size $envs" t-$size-$tag.dat $envs -- ./transformed --matrix-size=$size
    if cmp -s "$B/original-$size.dat" "$B/t-$size-$tag.dat"; then echo "ok   size $size, $envs: result equals the original's"
    else echo "FAIL size $size, $envs: result differs from the original's"; fails=$((fails + 1)); fi
  done
done

SANITIZER="${SANITIZER:-$(dirname "$NVCC")/compute-sanitizer}"
if [ -x "$SANITIZER" ]; then
  out=$(cd "$B" && PTB_SMS=0-7 PTB_STRICT=1 timeout 600 "$SANITIZER" --tool memcheck --error-exitcode 9 ./transformed 2>&1) &&
    grep -q 'Test Succeeded!' <<<"$out" && echo "ok   transformed PTB_SMS=0-7 under memcheck" ||
    { echo "FAIL memcheck: $(tail -5 <<<"$out")"; fails=$((fails + 1)); }
fi
echo "eigenvalues: $fails failures"
[ $fails = 0 ]
