#!/usr/bin/env bash
# libptb-ls.so preloaded into a program that is not a CUDA one: the program runs as before, and its own
# dlsym(RTLD_NEXT, ...) is still looked up from the caller. The check: a library that wraps puts and finds
# the next puts with dlsym(RTLD_NEXT) must get libc's; a dlsym that looked up from libptb-ls.so instead
# would hand it its own puts, which would call itself until the stack ran out.
#   check_ls_preload.sh LIBPTB_LS CXX LIBCUDA
# LIBCUDA: the driver library it was linked with (on a machine without a GPU, the toolkit's stub, found here
# as libcuda.so.1).
set -euo pipefail
lib="$1"
cxx="${2:-c++}"
libcuda="${3:-}"
[ -f "$lib" ] || { echo "check_ls_preload: FAIL: $lib not found"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/wrap.cpp" <<'CPP'
#include <dlfcn.h>
extern "C" int puts(const char* s) {
  using Puts = int (*)(const char*);
  static Puts next = reinterpret_cast<Puts>(dlsym(RTLD_NEXT, "puts"));
  return next ? next(s) : -1;
}
CPP
cat >"$tmp/main.cpp" <<'CPP'
#include <cstdio>
int main() { return std::puts("wrapped puts reached libc") < 0; }
CPP
"$cxx" -shared -fPIC -o "$tmp/libwrap.so" "$tmp/wrap.cpp" -ldl
"$cxx" -o "$tmp/main" "$tmp/main.cpp" -L"$tmp" -lwrap -Wl,-rpath,"$tmp" -ldl
mkdir "$tmp/driver"
[ -n "$libcuda" ] && ln -s "$libcuda" "$tmp/driver/libcuda.so.1"
out=$(LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$tmp/driver" LD_PRELOAD="$lib" "$tmp/main" 2>&1) || { echo "check_ls_preload: FAIL: the program failed under LD_PRELOAD: $out"; exit 1; }
if [ "$out" != "wrapped puts reached libc" ]; then
  echo "check_ls_preload: FAIL: unexpected output: $out"; exit 1
fi
echo "check_ls_preload: PASS: preloaded, a program's dlsym(RTLD_NEXT) still finds libc's puts"
