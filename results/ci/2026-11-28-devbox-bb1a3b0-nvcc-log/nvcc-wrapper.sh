#!/bin/bash
# Logging wrapper: CPU seconds of each nvcc run, its cwd and arguments.
t=$(mktemp /tmp/nvlog/t.XXXXXX)
/usr/bin/time -f "%U %S %e" -o "$t" /usr/local/cuda/bin/nvcc "$@"; rc=$?
echo "$(tail -1 "$t") $rc $PWD :: $*" >> /tmp/nvlog/log
rm -f "$t"
exit $rc
