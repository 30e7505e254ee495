#!/usr/bin/env bash
# clang-tidy (.clang-tidy's checks, every warning an error) on the C++ sources of lib/ and tools/ that
# changed since BASE: the files a change touches must be clean. A whole-tree run takes about 15 CPU s a
# file, too long for CI; give the files (or `git ls-files 'lib/*.cpp' 'tools/*.cpp'`) to check them all.
#   scripts/check_tidy.sh BUILD_DIR [BASE]     changed since BASE (default: HEAD~1, the newest commit)
#   scripts/check_tidy.sh BUILD_DIR -- FILE... these files
# BUILD_DIR holds compile_commands.json (the CMake build exports it). Exit 0 clean, 1 warnings, 2 set-up.
set -euo pipefail
cd "$(dirname "$0")/.."
TIDY="${CLANG_TIDY:-clang-tidy-19}"
build="${1:?usage: check_tidy.sh BUILD_DIR [BASE | -- FILE...]}"; shift
command -v "$TIDY" >/dev/null || { echo "check_tidy: $TIDY not found (scripts/setup.sh installs it)" >&2; exit 2; }
[ -f "$build/compile_commands.json" ] || { echo "check_tidy: no $build/compile_commands.json" >&2; exit 2; }
if [ "${1:-}" = "--" ]; then
  shift; files=("$@")
else
  base="${1:-HEAD~1}"
  if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
    echo "check_tidy: no commit $base to compare with (a shallow clone?); nothing checked"; exit 0
  fi
  mapfile -t files < <(git diff --name-only --diff-filter=AM "$base" -- 'lib/*.cpp' 'tools/*.cpp')
fi
if [ "${#files[@]}" = 0 ]; then echo "check_tidy: no C++ source of lib/ or tools/ changed"; exit 0; fi
# The build's precompiled header is GCC's; clang reads the header's text instead. GCC-only warning
# options in the compile commands are not clang's. GCC 12's libstdc++ calls std::get_temporary_buffer,
# which clang calls deprecated, inside std::stable_sort: the build's -Werror would make that an error.
if ! "$TIDY" -p "$build" --quiet --warnings-as-errors='*' --extra-arg=-Wno-ignored-gch \
     --extra-arg=-Wno-unknown-warning-option --extra-arg=-Wno-deprecated-declarations "${files[@]}"; then
  echo "check_tidy: clang-tidy found problems (above) in the ${#files[@]} files checked"; exit 1
fi
echo "check_tidy: ${#files[@]} files clean: ${files[*]}"
