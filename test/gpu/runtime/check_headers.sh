#!/bin/bash
# No GPU needed: every header of the runtime (runtime/include/ptb, detail/ and qos/ included) compiles on
# its own, included first in a .cu translation unit, warning-free with nvcc; and twice in a row (include
# guards).
# The compiles run in parallel (JOBS, default the number of cores) at -O0: what is checked is that each
# header parses and instantiates alone, not the code it generates.
#   bash test/gpu/runtime/check_headers.sh
set -eu
cd "$(dirname "$0")/../../.."
export NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
export FLAGS="-std=c++17 -arch=sm_90 -O0 -I runtime/include -Xcompiler -Wall,-Wextra -Werror all-warnings"
export out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
headers=$(cd runtime/include && ls ptb/*.cuh ptb/detail/*.cuh ptb/qos/*.h ptb/qos/*.cuh)
for h in $headers; do
  printf '#include <%s>\n#include <%s>\n' "$h" "$h" >"$out/$(echo "$h" | tr '/.' '__').cu"
done
echo "$headers" | xargs -P "${JOBS:-$(nproc)}" -I{} sh -c \
  'src="$out/$(echo {} | tr "/." "__").cu"; "$NVCC" $FLAGS -c "$src" -o "$src.o" > "$src.log" 2>&1 || { cat "$src.log"; echo "FAIL {} does not compile on its own"; exit 255; }'
echo "check_headers: $(echo "$headers" | wc -l) runtime headers compile on their own"
