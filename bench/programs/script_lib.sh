# Shell helpers shared by the GPU scripts of bench/programs (source it; it runs nothing).

# The median of the numbers on standard input, separated by spaces or newlines (the lower middle one of an
# even count; "nan" entries skipped); "nan" when there is none.
median() { tr ' ' '\n' | grep -v '^$' | grep -v nan | sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else print a[int((NR + 1) / 2)]}'; }

# transformed_sources DIR NAME: the files of program NAME as bench/programs/transform.sh wrote it into DIR,
# one per line: DIR/NAME.cu, and DIR/NAME.twins.cu when the twins went apart (nvcc builds both into one program).
transformed_sources() {
  echo "$1/$2.cu"
  [ -f "$1/$2.twins.cu" ] && echo "$1/$2.twins.cu"
  return 0
}
