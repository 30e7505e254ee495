# 2026-11-29 (third session) call 3: where the first twin launch's time goes (first_twin.sh, host stamps)
set -u
timeout 240 bash bench/programs/first_twin.sh --reps 7 build/bench-programs > $OUT/first_twin.txt 2>&1
echo "first_twin rc=$?"
cat $OUT/first_twin.txt
