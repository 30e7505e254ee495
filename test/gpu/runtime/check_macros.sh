#!/bin/bash
# No GPU needed: the runtime headers survive the macros a user's program may define (issue 38; the rule the
# headers follow: docs/runtime.md, "Names in the headers"). Every header of runtime/include/ptb (detail/ and
# qos/ included) is compiled in one translation unit under every single-letter macro A-Z a-z and common
# multi-letter ones (BLOCK, TILE, WARP_SIZE, min, idx, ...), each in three forms: with a value (-DN=1),
# empty (-DN=) and function-like (-D'N(...)=1').
# A macro that nvcc's own headers do not survive (a .cu that includes cuda_runtime.h and every standard
# header the runtime includes, nothing else) is skipped; the skipped ones are printed with their first error.
#
# Fast by grouping (nvcc -cuda: the front end checks host and device code; no host compile): one compile
# defines every macro of a form at once, and only when it fails is the group halved until the macros that
# fail alone are found. The macros nvcc 13.0's headers were seen to fail with (LIKELY_SKIPPED) are compiled
# one by one instead (in parallel, JOBS, default 2), so that the skip list is measured on every run.
# KNOWN lists the collisions left in headers on purpose (public API names): such a macro is compiled alone,
# must fail, and only in the files named for it; an error elsewhere is a new collision, and a pass says:
# take it off the list.
#   bash test/gpu/runtime/check_macros.sh
set -u
cd "$(dirname "$0")/../../.."
export NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
JOBS=${JOBS:-2}
export out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
start=$(date +%s)

# Collisions known and left on purpose: public API names, which stay as they are (docs/runtime.md, "Names in
# the headers"): MACRO, the forms it fails in, the files (under runtime/include/ptb) its errors may be in.
# k: qos::GSpaceController::k() (qos/gspace.h) and the field qos::DurationFit::k (qos/duration_model.h).
KNOWN="$(cat <<'TABLE'
k value,empty,function qos/duration_model.h,qos/gspace.h
TABLE
)"

letters="$(echo {A..Z} {a..z})"
multi="BLOCK BLOCK_SIZE BLOCKSIZE BLOCK_DIM BLOCK_X BLOCK_Y TILE TILE_SIZE TILE_WIDTH TILE_DIM WARP_SIZE WARPSIZE
  THREADS NTHREADS NUM_THREADS THREADS_PER_BLOCK BLOCKS NBLOCKS NUM_BLOCKS GRID GRID_SIZE SIZE DIM LEN WIDTH HEIGHT
  NX NY NZ BS TS DT DX DY EPS PI ITERS NITER REPEAT RADIUS STRIDE SHARED SMEM DEBUG NDEBUG VERBOSE CHECK CUDA_CHECK
  CHECK_CUDA CUDA_SAFE_CALL ERR ERROR MIN MAX ABS SQR MAX_THREADS MAX_BLOCKS FLOAT REAL TYPE DTYPE INDEX IDX
  min max idx tid bid gid lane warp tile stride real"
candidates="$letters $(echo $multi)"
LIKELY_SKIPPED="value:T,U,a,b,c,d,e,f,h,n,p,s,t,v,w,x,y,z empty:T,U,a,b,c,d,e,f,h,n,p,s,t,v,w,x,y,z function:a,b,h,n,s,x,y,z"

# Every standard and CUDA header the runtime includes, nothing of the runtime: what nvcc's headers survive.
grep -rhoE '#include <[^>]+>' runtime/include/ptb | grep -v '<ptb/' | sort -u >"$out/sys.cu"
# Every header of the runtime at once.
(cd runtime/include && ls ptb/*.cuh ptb/detail/*.cuh ptb/qos/*.h ptb/qos/*.cuh) | sed 's/.*/#include <&>/' >"$out/ptb.cu"

defs() {  # form macros... -> the -D options, one a line
  local form=$1 m
  shift
  for m in "$@"; do
    case $form in
      value) printf '%s\n' "-D$m=1" ;;
      empty) printf '%s\n' "-D$m=" ;;
      function) printf '%s\n' "-D$m(...)=1" ;;
    esac
  done
}
compile() {  # file form macros... -> status; the log in $out/<file>.<form>.<first macro>.log (printed path in $log)
  local file=$1 form=$2
  shift 2
  local d=()
  mapfile -t d < <(defs "$form" "$@")
  log="$out/$file.$form.$1.$#.log"
  echo x >>"$out/count"
  "$NVCC" -std=c++17 -arch=sm_90 -O0 -I runtime/include "${d[@]}" -cuda "$out/$file.cu" -o "$log.ii" >"$log" 2>&1
  local rc=$?
  rm -f "$log.ii"
  return $rc
}
first_error() { grep -m1 'error' "$1" | sed "s|$out/||; s|^.*/runtime/include/|runtime/include/|; s|/detail/\.\./|/|"; }
# failing file form macros...: "MACRO<TAB>first error" for each macro that fails alone (halving the group).
failing() {
  local file=$1 form=$2
  shift 2
  [ $# -eq 0 ] && return
  compile "$file" "$form" "$@" && return
  if [ $# -eq 1 ]; then
    printf '%s\t%s\n' "$1" "$(first_error "$log")"
    return
  fi
  local h=$(($# / 2))
  failing "$file" "$form" "${@:1:$h}"
  failing "$file" "$form" "${@:$((h + 1))}"
}
# alone file form macro: "MACRO<TAB>ok|fail<TAB>first error<TAB>the runtime files its errors are in"
alone() {
  if compile "$1" "$2" "$3"; then printf '%s\tok\n' "$3"; return; fi
  local files
  files=$(grep -oE 'runtime/include/ptb/[^()]*\([0-9]+\): error' "$log" | sed 's|runtime/include/ptb/||; s|([0-9]*): error||; s|^.*\.\./||; s|^detail/\.\./||' | sort -u | tr '\n' ',')
  printf '%s\tfail\t%s\t%s\n' "$3" "$(first_error "$log")" "$files"
}
export -f defs compile first_error alone

status=0
for form in value empty function; do
  likely=$(for e in $LIKELY_SKIPPED; do [ "${e%%:*}" = $form ] && echo "${e#*:}" | tr ',' ' '; done)
  rest=$(for m in $candidates; do [[ " $likely " == *" $m "* ]] || echo "$m"; done)
  # nvcc's headers: the likely ones one by one, the rest at once
  singles=$(printf '%s\n' $likely | xargs -P "$JOBS" -I{} bash -c "alone sys $form {}")
  skipped=$( (printf '%s\n' "$singles" | awk -F'\t' '$2 == "fail" {print $1 "\t" $3}'; failing sys $form $rest) | sed '/^$/d')
  survive=$(for m in $candidates; do printf '%s\n' "$skipped" | cut -f1 | grep -qxF -- "$m" || echo "$m"; done)
  known=$(printf '%s\n' "$KNOWN" | awk -v f=$form '("," $2 ",") ~ ("," f ",") {print $1}')
  checked=$(for m in $survive; do printf '%s\n' "$known" | grep -qxF -- "$m" || echo "$m"; done)
  echo "== $form (e.g. $(defs "$form" N)): nvcc's headers survive $(echo $survive | wc -w) of $(echo $candidates | wc -w); $(echo $checked | wc -w) checked at once, $(echo $known | wc -w) known to fail"
  if [ -n "$skipped" ]; then
    echo "   skipped, nvcc's own headers fail with them: $(printf '%s\n' "$skipped" | cut -f1 | tr '\n' ' ')"
    printf '%s\n' "$skipped" | while IFS=$'\t' read -r m e; do echo "      $m: $e"; done
  fi
  bad=$(failing ptb "$form" $checked)
  if [ -n "$bad" ]; then
    status=1
    printf '%s\n' "$bad" | while IFS=$'\t' read -r m e; do echo "FAIL $(defs "$form" "$m"): $e"; done
  fi
  known_here=$(for m in $known; do printf '%s\n' "$skipped" | cut -f1 | grep -qxF -- "$m" || echo "$m"; done)
  [ -z "$known_here" ] && continue
  while IFS=$'\t' read -r m res e files; do
    allowed=$(printf '%s\n' "$KNOWN" | awk -v m="$m" '$1 == m {print $3}')
    if [ "$res" = ok ]; then
      status=1
      echo "XPASS $(defs "$form" "$m"): the runtime survives it now: take $form off its line in KNOWN ($0)"
      continue
    fi
    new=$(for f in ${files//,/ }; do [[ ",$allowed," == *",$f,"* ]] || echo "$f"; done)
    if [ -n "$new" ]; then
      status=1
      echo "FAIL $(defs "$form" "$m"): known to fail only in $allowed, fails in $(echo $new) too: $e"
    else
      echo "   known failure $(defs "$form" "$m") in $allowed"
    fi
  done < <(printf '%s\n' $known_here | xargs -P "$JOBS" -I{} bash -c "alone ptb $form {}")
done
echo "check_macros: $(wc -l <"$out/count") compiles in $(($(date +%s) - start)) s; $([ $status = 0 ] && echo ok || echo FAILED)"
exit $status
