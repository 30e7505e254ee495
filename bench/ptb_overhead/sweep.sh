#!/usr/bin/env bash
# One GPU call: builds the slow corpus programs (transformed) against runtime/include (A) and, when
# .device-carry/baseline/include exists, against that older runtime (B), then runs each program's --bench
# under several runtime tunings (environment knobs) and prints one table: ratio ptb/original per variant.
# Usage (GPU machine, repo root): bash bench/ptb_overhead/sweep.sh [--tests] [REGEX]
set -u
cd "$(dirname "$0")/../.."
TESTS=0; [ "${1:-}" = --tests ] && { TESTS=1; shift; }
export PTB_MODE="${PTB_MODE:-ptb}"  # --tests checks the twins (--bench sets the modes itself)
RE="${1:-grid3d|return_after|multi_stream|template_block|early_return_thread|coop_groups_dynamic|transpose_tiled|reduce_dynamic|shared_mem_task|wmma_gemm|grid2d_block2d}"
OUT="${OUT:-out}"; mkdir -p "$OUT" build/sweep
NVCC=/usr/local/cuda/bin/nvcc
F="-std=c++17 -O2 -arch=sm_90 -lineinfo -I test/gpu"
echo "== $(date -u '+%F %T') UTC, $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | head -1)"
TDIR="${TDIR:-build/gpu-transformed}"
NAMES=$(ls $TDIR/*.cu | xargs -n1 basename | sed 's/\.cu$//' | grep -E "$RE")
INCS="A:runtime/include"; [ -d .device-carry/baseline/include ] && INCS="B:.device-carry/baseline/include $INCS"
# N (diagnosis only, FORCE_NONE=1): the twin with TaskSync::none forced, i.e. without the barrier between
# tasks. Wrong for kernels that use shared memory across tasks (its results are not checked): it only
# measures what that barrier costs.
mkdir -p build/sweep/none
for n in $NAMES; do
  sed 's/::ptb::run_tasks(ptb_launch/::ptb::run_tasks<::ptb::TaskSync::none>(ptb_launch/' $TDIR/$n.cu > build/sweep/none/$n.cu
done
for n in $NAMES; do for ab in $INCS; do
  echo "$NVCC $F -I ${ab#*:} $TDIR/$n.cu -o build/sweep/$n.${ab%%:*} > build/sweep/$n.${ab%%:*}.log 2>&1 || echo BUILD FAILED $n ${ab%%:*}"
done
  [ "${FORCE_NONE:-0}" = 1 ] && ! cmp -s $TDIR/$n.cu build/sweep/none/$n.cu && echo "$NVCC $F -I runtime/include build/sweep/none/$n.cu -o build/sweep/$n.N > build/sweep/$n.N.log 2>&1 || echo BUILD FAILED $n N"
done | xargs -P 16 -I{} bash -c '{}'
if [ $TESTS = 1 ]; then
  for n in $NAMES; do for ab in $INCS; do v=${ab%%:*}
    r=$(timeout 60 build/sweep/$n.$v 2>&1 | grep -E "^(PASS|FAIL)" ); echo "TEST $v $n: ${r:-CRASH}"; done; done | tee "$OUT/tests.txt"
fi
VARIANTS=${VARIANTS:-"def= def2= mc16=PTB_MAX_CHUNK=16 mc8=PTB_MAX_CHUNK=8 mc4=PTB_MAX_CHUNK=4 cc128k=PTB_CHECK_CYCLES=131072 mc4cc128k=PTB_MAX_CHUNK=4,PTB_CHECK_CYCLES=131072 fc1=PTB_FIRST_CHUNK=1 cap4=PTB_BLOCKS_PER_SM=4"}
: > "$OUT/bench.txt"
for n in $NAMES; do for ab in $INCS N:; do v=${ab%%:*}; [ -x build/sweep/$n.$v ] || continue; vs="$VARIANTS"; [ $v = N ] && vs="def="
  for var in $vs; do
  name=${var%%=*}; env=${var#*=}; e=(); [ -n "$env" ] && IFS=, read -ra e <<< "$env"
  [ $name = s1 ] && [[ $n != multi_stream* ]] && continue  # TG_BENCH_STREAMS: multi_stream_concurrent only
  line=$(env "${e[@]}" timeout 60 build/sweep/$n.$v --bench 2>&1 | grep "^BENCH")
  echo "$v $name $line" | tee -a "$OUT/bench.txt"
done; done; done
echo; echo "== ratio ptb/orig (rows: program; columns: build:variant)"
awk '{k=$1":"$2; if(!(k in seen)){seen[k]=1; cols[++nc]=k} r[$4,k]=$7; o[$4]=$5; if(!($4 in sp)){sp[$4]=1; rows[++nr]=$4}}
  END{printf "%-30s %8s", "program", "orig ms"; for(c=1;c<=nc;c++) printf " %10s", cols[c]; print "";
      for(i=1;i<=nr;i++){p=rows[i]; printf "%-30s %8.4f", p, o[p]; for(c=1;c<=nc;c++) printf " %10s", r[p,cols[c]]; print ""}}' "$OUT/bench.txt" | tee "$OUT/table.txt"
