#!/usr/bin/env bash
# libptb-ls.so exports InitializeInjection (the driver's injection entry point), the C API of ptb_ls.h and,
# on x86-64, dlsym (runtime/ls/interpose.cpp), with C names, and nothing else of its own (the build hides
# the rest).
set -euo pipefail
lib="$1"
[ -f "$lib" ] || { echo "check_ls_exports: FAIL: $lib not found"; exit 1; }
syms=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}' | sort)
bad=0
for want in InitializeInjection ptb_ls_begin ptb_ls_end; do
  if ! grep -qx "$want" <<<"$syms"; then echo "check_ls_exports: FAIL: $want is not exported by $lib"; bad=1; fi
done
if [ "$(uname -m)" = x86_64 ] && ! grep -qx dlsym <<<"$syms"; then
  echo "check_ls_exports: FAIL: dlsym is not exported by $lib (nothing would be interposed)"; bad=1
fi
extra=$(grep -vx -e InitializeInjection -e ptb_ls_begin -e ptb_ls_end -e dlsym <<<"$syms" || true)
if [ -n "$extra" ]; then echo "check_ls_exports: FAIL: $lib exports more than its API:"; echo "$extra"; bad=1; fi
# It needs no CUPTI to load (CUPTI is opened at run time, when injected only): a preloaded library must
# load where the toolkit's CUPTI is not installed (a container with PyTorch from pip).
if readelf -d "$lib" | grep -q 'NEEDED.*libcupti'; then echo "check_ls_exports: FAIL: $lib needs libcupti to load"; bad=1; fi
[ "$bad" = 0 ] && echo "check_ls_exports: PASS: $lib exports InitializeInjection, ptb_ls_begin, ptb_ls_end (and dlsym on x86-64)"
exit "$bad"
