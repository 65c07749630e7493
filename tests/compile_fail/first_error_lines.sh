#!/usr/bin/env bash
# Prints, for each compile-fail case, the line of the compiler's output that holds the
# first "error:" and the number of errors:
#   tests/compile_fail/first_error_lines.sh [compiler [flags...]]    (default: g++ -std=c++20)
# Run from the repository root. Torch cases need GCC (LibTorch's headers, under
# $TORCH_INCLUDE, default /usr/include/torch/csrc/api/include); other compilers skip them.
set -euo pipefail
cxx=${1:-g++}
shift || true
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(-std=c++20)
torch=${TORCH_INCLUDE:-/usr/include/torch/csrc/api/include}
printf "%-30s %-12s %s\n" case first-error errors
for source in tests/compile_fail/*.cpp; do
  name=$(basename "$source" .cpp)
  extra=()
  if grep -q 'hookforge/torch.hpp' "$source"; then
    if [[ $("$cxx" --version) == *clang* ]]; then printf "%-30s %s\n" "$name" "n/a (torch)"; continue; fi
    extra=(-isystem "$torch")
  fi
  out=$("$cxx" "${flags[@]}" -fsyntax-only -Iinclude -Itests/compile_fail "${extra[@]}" \
        -DHOOKFORGE_SHOULD_FAIL "$source" 2>&1 || true)
  first=$(grep -n 'error: ' <<<"$out" | head -1 | cut -d: -f1)
  printf "%-30s %-12s %s\n" "$name" "${first:-none}" "$(grep -c 'error: ' <<<"$out")"
done
