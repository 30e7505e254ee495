#!/bin/bash
# No GPU needed: every header of the runtime (runtime/include/ptb, detail/ included) compiles on its own,
# included first in a .cu translation unit, warning-free with nvcc; and twice in a row (include guards).
#   bash test/gpu/runtime/check_headers.sh
set -eu
cd "$(dirname "$0")/../../.."
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
FLAGS="-std=c++17 -arch=sm_90 -O2 -I runtime/include -Xcompiler -Wall,-Wextra -Werror all-warnings"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
n=0
for h in $(cd runtime/include && ls ptb/*.cuh ptb/detail/*.cuh); do
  src="$out/$(echo "$h" | tr '/.' '__').cu"
  printf '#include <%s>\n#include <%s>\n' "$h" "$h" >"$src"
  "$NVCC" $FLAGS -c "$src" -o "$src.o" || { echo "FAIL $h does not compile on its own"; exit 1; }
  n=$((n + 1))
done
echo "check_headers: $n runtime headers compile on their own"
