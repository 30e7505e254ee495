# 2026-11-29 (third session) call 2: where the first twin launch's time goes (bench/programs/first_twin.sh,
# the runtime's host stamps), then the goal rows of issue 40 with a memory-bound BE (47 s windows, the gate that
# met the goal with compute BE)
set -u
T0=$(date +%s)
timeout 200 bash bench/programs/first_twin.sh --reps 7 build/bench-programs > $OUT/first_twin.txt 2>&1
echo "first_twin rc=$? at +$(( $(date +%s) - T0 )) s"
cat $OUT/first_twin.txt
mkdir -p $OUT/goal
OUT=$OUT/goal PART=goal SECS=47 BE=memory COLO=0 TWO_BE=0 FAULTS=0 GATES="gate --poll-us 5 --between-after-us 100" \
  timeout 400 bash bench/colocate/processes.sh > $OUT/goal-run.txt 2>&1
echo "goal rc=$? at +$(( $(date +%s) - T0 )) s"
tail -14 $OUT/goal-run.txt
cp $OUT/goal/processes.md $OUT/goal-processes.md 2>/dev/null
cd $OUT && tar czf goal-logs.tgz goal && rm -rf goal
