set -u
W=build/pw; rm -rf $W; mkdir -p $W $OUT
git rev-parse --short HEAD > $W/commit.txt 2>/dev/null
(timeout 120 bash test/gpu/ls/run.sh $W/ls > $W/ls-probe.log 2>&1; echo "ls-probe rc=$?" >> $W/ls-probe.log)
grep -E "PASS|FAIL|rc=|launch" $W/ls-probe.log | tail -25
(OUT=$W timeout 470 bash bench/colocate/processes.sh > $W/processes.log 2>&1; echo "processes rc=$?" >> $W/processes.log)
tail -45 $W/processes.log
cp $W/processes.md $W/run.log $W/ls-probe.log $OUT/ 2>/dev/null
rm -f $W/ls/ls_probe $W/ls/*.so
tar czf $OUT/logs.tgz $W 2>/dev/null
ls -la $OUT
