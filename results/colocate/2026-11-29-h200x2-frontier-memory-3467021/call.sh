# 2026-11-29 call 4 (nvidia-h200-x2): GPU 0: the corpus original and transformed, confined, the stress test and
# the sanitizers at this tree (the runtime changed: staging bytes in the pool page, early set-up); GPU 1 at the
# same time: issue 42's frontier with memory BE, 8 s rows (processes.sh's own MPS daemon for GPU 1)
set -u
T0=$(date +%s)
export CUDA_DEVICE_ORDER=PCI_BUS_ID NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/f1 $OUT/v
( env DEVICE=1 BE=memory OUT=$OUT/f1 PART=frontier SECS=8 COLO=0 TWO_BE=0 FAULTS=0 GREENS="32 64" \
    MPS_PCTS="10 25 50" LS_PCTS="75" GREEN_GATES="16" \
    GATES="gate --poll-us 5 --between-after-us 100|gate --poll-us 5 --between-per-sm 3 --between-after-us 100" \
    timeout 420 bash bench/colocate/processes.sh > $OUT/f1-run.txt 2>&1
  echo "frontier GPU 1 rc=$? at +$(( $(date +%s) - T0 )) s" >> $OUT/f1-run.txt ) &
fp=$!
CUDA_VISIBLE_DEVICES=0 OUT=$OUT/v COMMIT=$(cat .device-carry/commit) timeout 400 bash test/gpu/verify_on_gpu.sh corpus confine stress sanitize > $OUT/v-run.txt 2>&1
echo "verify rc=$? at +$(( $(date +%s) - T0 )) s"
cp $OUT/v/verify.txt $OUT/verify.txt
cat $OUT/verify.txt | tail -60
wait $fp
tail -3 $OUT/f1-run.txt
cp $OUT/f1/processes.md $OUT/f1-processes.md 2>/dev/null; cp $OUT/f1/frontier.md $OUT/f1-frontier.md 2>/dev/null
cat $OUT/f1-processes.md $OUT/f1-frontier.md
cd $OUT && tar czf logs.tgz f1 v && rm -rf f1 v
