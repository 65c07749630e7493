#!/usr/bin/env bash
# Formats hookforge's C++ sources with clang-format 19 and the project's .clang-format:
#   scripts/format.sh           rewrite the files in place
#   scripts/format.sh --check   list the files it would change and fail (the CTest test `format`)
# .clang-format-ignore names what it leaves alone. Exit 77 (a skip for CTest) without
# clang-format 19: another version formats some constructs differently.
set -euo pipefail
cd "$(dirname "$0")/.."
cf=${HOOKFORGE_CLANG_FORMAT:-clang-format-19}
if ! command -v "$cf" >/dev/null; then
  echo "hookforge: $cf not found (Debian: clang-format-19); formatting not checked"
  exit 77
fi
if [[ -e .git ]]; then
  mapfile -t files < <(git ls-files '*.hpp' '*.cpp' '*.h')
else
  mapfile -t files < <(find include src tests examples benchmarks tools fuzz -name '*.hpp' -o -name '*.cpp' -o -name '*.h')
fi
if [[ ${1:-} != --check ]]; then
  "$cf" -i "${files[@]}"
  exit 0
fi
unformatted=()
for f in "${files[@]}"; do
  "$cf" --dry-run --Werror "$f" 2>/dev/null || unformatted+=("$f")
done
if ((${#unformatted[@]})); then
  printf 'hookforge: %d file(s) differ from clang-format 19 (.clang-format); run scripts/format.sh:\n' "${#unformatted[@]}"
  printf '  %s\n' "${unformatted[@]}"
  exit 1
fi
echo "hookforge: ${#files[@]} files formatted as .clang-format says"
