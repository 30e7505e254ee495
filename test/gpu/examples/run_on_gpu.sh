#!/usr/bin/env bash
# On the GPU machine (repository root): builds the bundled examples original and transformed
# (build/examples-transformed, from test/gpu/examples/transform.sh) and runs them: unconfined, confined
# to SM sets (PTB_SMS) and with a blocks-per-SM cap (PTB_BLOCKS_PER_SM). Each program checks its own
# result against the CPU (scale_app on fresh random sizes and inputs: several runs each). Exit 0 when
# every run printed PASS.
set -u
cd "$(dirname "$0")/../../.."
IN="${1:-build/examples-transformed}"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
ARCH="${ARCH:-sm_90}"
B="$(mktemp -d)"
fails=0
build() {  # build NAME SOURCES... (flags before the sources)
  local name=$1; shift
  if ! "$NVCC" -O2 -std=c++17 -arch="$ARCH" -I runtime/include "$@" -o "$B/$name" > "$B/$name.log" 2>&1; then
    echo "NOBUILD $name"; sed -n 1,20p "$B/$name.log"; fails=$((fails + 1)); return 1
  fi
}
check() {  # check LABEL ENV... -- PROGRAM
  local label=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local out rc
  out=$(env "${envs[@]}" timeout 60 "$@" 2>&1); rc=$?
  if [ $rc = 0 ] && grep -q PASS <<<"$out"; then echo "ok   $label: $(tail -1 <<<"$out")"
  else echo "FAIL $label (rc=$rc): $(tail -3 <<<"$out")"; fails=$((fails + 1)); fi
}
S=examples/scale-app
build scale_app_original -I$S/include -DSCALE_BLOCK=256 $S/main.cu $S/scale.cu
build scale_app_ptb -I$S/include -DSCALE_BLOCK=256 "$IN/scale-app/main.cu" "$IN/scale-app/scale.cu"
build saxpy_original examples/saxpy.cu
build saxpy_ptb "$IN/saxpy.cu"
echo "device: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
for prog in scale_app saxpy; do
  [ -x "$B/${prog}_original" ] && check "$prog original" X=1 -- "$B/${prog}_original"
  [ -x "$B/${prog}_ptb" ] || continue
  runs=1; [ $prog = scale_app ] && runs=4
  for r in $(seq $runs); do
    check "$prog ptb unconfined #$r" X=1 -- "$B/${prog}_ptb"
    check "$prog ptb PTB_SMS=0-7 #$r" PTB_SMS=0-7 PTB_STRICT=1 -- "$B/${prog}_ptb"
    check "$prog ptb PTB_SMS=5 #$r" PTB_SMS=5 PTB_STRICT=1 -- "$B/${prog}_ptb"
    check "$prog ptb PTB_SMS=0-65 cap 1 #$r" PTB_SMS=0-65 PTB_BLOCKS_PER_SM=1 PTB_STRICT=1 -- "$B/${prog}_ptb"
    check "$prog ptb PTB_MODE=original #$r" PTB_MODE=original -- "$B/${prog}_ptb"
  done
done
for way in build/examples-bin/*/; do
  [ -x "$way/scale_app" ] || continue
  w=$(basename "$way")
  for r in 1 2; do
    check "scale_app ($w) unconfined #$r" X=1 -- "$way/scale_app"
    check "scale_app ($w) PTB_SMS=0-7 #$r" PTB_SMS=0-7 -- "$way/scale_app"
    check "scale_app ($w) PTB_SMS=66-131 cap 1 #$r" PTB_SMS=66-131 PTB_BLOCKS_PER_SM=1 -- "$way/scale_app"
  done
done
if [ -x build/examples-bin/colocate/colocate ]; then
  # built here by installed_package.sh; passes when its trace holds every BE task once (exit status 0)
  prog="$PWD/build/examples-bin/colocate/colocate"
  if out=$(cd "$B" && timeout 120 "$prog" 2>&1); then echo "ok   colocate:"; else echo "FAIL colocate:"; fails=$((fails + 1)); fi
  sed 's/^/       /' <<<"$out"
  [ -n "${OUT:-}" ] && cp "$B"/colocate.png "$B"/colocate.json "$OUT"/ 2>/dev/null  # the SM-over-time picture
fi
echo "examples: $fails failed"
[ $fails = 0 ]
