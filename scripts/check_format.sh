#!/usr/bin/env bash
# The project's own C++/CUDA sources follow .clang-format (runtime/.clang-format for the runtime headers):
# lib/, tools/, test/unit/, runtime/include/ and runtime/ls/. Test inputs (test/lit, test/gpu, test/fusion corpora),
# examples and bench are inputs whose exact text the tests depend on, and are not checked.
#   scripts/check_format.sh        list each file that differs, exit 1 if any
#   scripts/check_format.sh --fix  rewrite them in place
set -euo pipefail
cd "$(dirname "$0")/.."
FORMAT="${CLANG_FORMAT:-clang-format-19}"
command -v "$FORMAT" >/dev/null || { echo "check_format: $FORMAT not found (scripts/setup.sh installs it)" >&2; exit 2; }
mapfile -t files < <(git ls-files -co --exclude-standard -- 'lib/*.cpp' 'lib/*.h' 'tools/*.cpp' 'tools/*.h' \
  'tools/*.cu' 'tools/*.cuh' 'test/unit/*.cpp' 'test/unit/*.h' 'runtime/include/*.cuh' 'runtime/include/*.h' \
  'runtime/ls/*.cpp' 'runtime/ls/*.h')
if [ "${1:-}" = "--fix" ]; then
  "$FORMAT" -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! "$FORMAT" --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "check_format: $f differs from its .clang-format (scripts/check_format.sh --fix)"
    bad=1
  fi
done
[ "$bad" = 0 ] && echo "check_format: ${#files[@]} files follow .clang-format"
exit "$bad"
