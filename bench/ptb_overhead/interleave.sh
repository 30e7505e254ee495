#!/usr/bin/env bash
# NOTE: PTB_INTERLEAVE exists only in the runtime of commit 5beb9b8 (removed afterwards, docs/design/runtime.md); check that commit out to rerun this A/B.
# One GPU call (repo root, carry build/gpu-transformed): A/B of the task order in ONE binary per program.
# PTB_INTERLEAVE=0: today's order (each worker walks consecutive ids); PTB_INTERLEAVE=c: interleaved order
# (groups of c x W ids; worker column w = tasks w, w+W, ..., w+(c-1)W), see ptb::Tuning::interleave.
# Builds the runtime tests once, runs test_basic and test_policy (+ --env) under every setting, then the
# corpus subset (correctness + --bench) under every setting. Extra settings only while time is left.
# Usage: bash bench/ptb_overhead/interleave.sh [SETTING ...]   (default: 0 8 16 4)
set -u
cd "$(dirname "$0")/../.."
OUT="${OUT:-out}"; mkdir -p "$OUT" build-rt
T0=$(date +%s)
SETTINGS="${*:-0 8 16 4}"
NVCC=/usr/local/cuda/bin/nvcc
RE='grid3d|return_after|template_block|transpose|reduce_dyn|vecadd|grid2d|huge_grid|wmma'
echo "== $(date -u '+%F %T') UTC, $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | head -1)"
echo "== commit $(git rev-parse --short HEAD 2>/dev/null) (working tree as carried)"
FLAGS="-std=c++17 -arch=sm_90 -O3 -I runtime/include -Xcompiler -Wall,-Wextra"
for t in test_basic test_policy; do
  ( $NVCC $FLAGS -o build-rt/$t test/gpu/runtime/$t.cu > build-rt/$t.buildlog 2>&1; echo "build $t rc=$?" ) &
done
# the corpus builds (run_on_gpu.sh reuses them in every later pass); correctness of the first setting here
first=${SETTINGS%% *}
wait
rtlog="$OUT/rt.txt"; : > "$rtlog"
for v in $SETTINGS; do
  for t in test_basic test_policy; do
    r=$(cd /tmp && PTB_INTERLEAVE=$v timeout -s KILL 90 "$OLDPWD/build-rt/$t" 2>&1 | tee -a "$rtlog" | grep -E "^$t(:| --env:)" | tail -1)
    echo "RT interleave=$v $t: ${r:-NO VERDICT (crash/timeout)}"
  done
  r=$(cd /tmp && PTB_INTERLEAVE=$v PTB_SMS=0-65 PTB_BLOCKS_PER_SM=2 timeout -s KILL 60 "$OLDPWD/build-rt/test_policy" --env 2>&1 | tee -a "$rtlog" | tail -1)
  echo "RT interleave=$v test_policy --env: ${r:-NO VERDICT}"
done
echo "== runtime tests done at +$(( $(date +%s) - T0 )) s"
: > "$OUT/summaries.txt"
for v in $SETTINGS; do
  el=$(( $(date +%s) - T0 ))
  if [ "$v" != "$first" ] && [ $el -gt 210 ]; then echo "== skip setting $v (time: +$el s)"; continue; fi
  echo "== corpus, PTB_INTERLEAVE=$v (+$el s)"
  ( export PTB_INTERLEAVE=$v OUT=/tmp/pass_$v; mkdir -p $OUT
    bash test/gpu/run_on_gpu.sh --bench --only "$RE" build/gpu-transformed > /tmp/pass_$v.log 2>&1; echo "rc=$?" >> /tmp/pass_$v.log )
  { echo "### PTB_INTERLEAVE=$v"; cat /tmp/pass_$v/summary.txt 2>/dev/null || tail -40 /tmp/pass_$v.log; tail -1 /tmp/pass_$v.log; } >> "$OUT/summaries.txt"
  grep -E "FAIL|TIMEOUT|CRASH|NOBUILD" /tmp/pass_$v/summary.txt 2>/dev/null | head
  tail -1 /tmp/pass_$v.log
done
echo; echo "== BENCH ratio ptb/orig per setting (same binaries)"
for v in $SETTINGS; do tar -xzf /tmp/pass_$v/gpu-logs.tar.gz -O 2>/dev/null | grep -a "^BENCH" | sed "s/^/$v /"; done > /tmp/bench_all.txt
cp /tmp/bench_all.txt "$OUT/bench_all.txt"
awk '{k="i"$1; if(!(k in seen)){seen[k]=1; cols[++nc]=k} r[$3,k]=$6; o[$3,k]=$4; p[$3,k]=$5; if(!($3 in sp)){sp[$3]=1; rows[++nr]=$3}}
  END{printf "%-28s", "program"; for(c=1;c<=nc;c++) printf " %22s", cols[c]" orig/ptb/ratio"; print "";
      for(i=1;i<=nr;i++){q=rows[i]; printf "%-28s", q; for(c=1;c<=nc;c++) printf " %7s/%7s/%6s", o[q,cols[c]], p[q,cols[c]], r[q,cols[c]]; print ""}
      for(c=1;c<=nc;c++){s=0;n=0;w=0; for(i=1;i<=nr;i++){x=r[rows[i],cols[c]]; if(x>0){s+=log(x);n++; if(x>w)w=x}} if(n) printf "%s: geomean %.4f worst %.4f over %d\n", cols[c], exp(s/n), w, n}}' \
  /tmp/bench_all.txt | tee "$OUT/table.txt"
# Nsight Compute (DRAM bytes, L2 hit, time) of one original and one twin launch, per setting in $NCU_SETTINGS
M=gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,smsp__inst_executed.sum
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for v in ${NCU_SETTINGS:-}; do for pk in grid3d_block3d:stencil7 return_after_last_barrier:neighbour_diff; do
  el=$(( $(date +%s) - T0 )); [ $el -gt 240 ] && { echo "== skip ncu $v $pk (time: +$el s)"; continue; }
  p=${pk%%:*}; k=${pk#*:}
  echo "=== ncu PTB_INTERLEAVE=$v $p ($k)"
  PTB_INTERLEAVE=$v timeout 30 "$NCU" --clock-control none --metrics "$M" -k "regex:^$k" --launch-skip 6 --launch-count 2 \
    build/gpu-bin/ptb/$p --bench 2>&1 | grep -E "^  [a-z_]|^    [a-z_]+__|ERR|rror" | sed 's/  */ /g'
done; done 2>&1 | tee "$OUT/ncu.txt"
echo "== done at +$(( $(date +%s) - T0 )) s"
