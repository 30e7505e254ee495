#!/usr/bin/env bash
# One GPU call (after sweep.sh built build/sweep/*): Nsight Compute counters of the original kernel and of
# its PTB twin (one launch each, taken after the bench's warm-up), and SASS instruction counts, for the
# slow corpus programs. Usage (GPU machine, repo root): bash bench/ptb_overhead/diagnose.sh
set -u
cd "$(dirname "$0")/../.."
OUT="${OUT:-out}"; mkdir -p "$OUT"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,launch__grid_size,launch__occupancy_limit_registers,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__issue_active.avg.pct_of_peak_sustained_active
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for pk in grid3d_block3d:stencil7 return_after_last_barrier:neighbour_diff early_return_thread:positive_only \
          template_block_reduce:block_sum transpose_tiled:transpose wmma_gemm:wmma_gemm; do
  p=${pk%%:*}; k=${pk#*:}
  echo "=== ncu $p ($k)"
  timeout 30 "$NCU" --clock-control none --metrics "$M" -k "regex:^$k" --launch-skip 6 --launch-count 2 \
    build/sweep/$p.A --bench 2>&1 | grep -E "^  [a-z_]|^    [a-z_]+__|BENCH|ERR|rror" | sed 's/  */ /g'
done 2>&1 | tee "$OUT/ncu.txt"
for p in early_return_thread grid3d_block3d return_after_last_barrier wmma_gemm; do
  cuobjdump -sass build/sweep/$p.A > /tmp/sass-$p.txt 2>&1
  awk '/Function :/{f=$3} /^ +\/\*[0-9a-f]{4}\*\//{n[f]++} END{for(f in n) print "SASS '"$p"'", f, n[f], "instructions"}' /tmp/sass-$p.txt
done | tee -a "$OUT/ncu.txt"
