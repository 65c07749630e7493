#!/usr/bin/env bash
# benchmarks/callgrind_dispatch.sh — instructions per fire of one point with N hooks, under
# callgrind (docs/benchmarks.md, "Dispatch"). Deterministic: the same binary gives the same counts.
#
#   benchmarks/callgrind_dispatch.sh [BUILD_DIR]
#
# BUILD_DIR: a configured build tree with the benchmarks enabled; its
# hookforge_callgrind_dispatch target is (re)built. Without it, build-bench/ in
# the source tree is configured (Release, -O2, core only) and used.
# Environment: ITERATIONS (fires per run, default 100000), JOBS (build jobs, default 1),
# CASES, COUNTS (space-separated subsets of the defaults below).
#
# Only the instructions executed inside `fire_loop` (the fire loop of each case,
# see dispatch_cases.hpp) are counted: valgrind --toggle-collect='*fire_loop*'.
# Ir per fire = those instructions / ITERATIONS (the loop's own increment,
# compare and branch included, the same in every case). Exits 1 when static and
# hand-written differ by more than 1% for some N.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build-bench}"
iterations="${ITERATIONS:-100000}"
jobs="${JOBS:-1}"
cases=(${CASES:-static hand static_slot runtime virtual function mixed})
counts=(${COUNTS:-0 1 8 32})

command -v valgrind >/dev/null || { echo "valgrind not found (Debian: apt-get install valgrind)" >&2; exit 2; }

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" -DHOOKFORGE_BUILD_TESTS=OFF \
    -DHOOKFORGE_BUILD_EXAMPLES=OFF -DHOOKFORGE_WITH_TORCH=OFF -DHOOKFORGE_BUILD_BENCHMARKS=ON >&2
fi
cmake --build "$build" --target hookforge_callgrind_dispatch -j "$jobs" >&2
driver="$build/benchmarks/hookforge_callgrind_dispatch"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

declare -A ir
for c in "${cases[@]}"; do
  for n in "${counts[@]}"; do
    out="$work/callgrind.$c.$n"
    if ! valgrind --tool=callgrind --toggle-collect='*fire_loop*' --callgrind-out-file="$out" \
           "$driver" "$c" "$n" "$iterations" >"$work/stdout" 2>"$work/stderr"; then
      cat "$work/stdout" "$work/stderr" >&2
      echo "callgrind run failed: $c N=$n" >&2
      exit 2
    fi
    total="$(awk '/^totals:/ {print $2}' "$out")"
    ir["$c,$n"]="$total"
  done
done

per_fire() { awk -v t="$1" -v i="$iterations" 'BEGIN { printf "%.2f", t / i }'; }

cache="$build/CMakeCache.txt"
compiler="$(awk -F= '/^CMAKE_CXX_COMPILER:/ {print $2}' "$cache")"
type="$(awk -F= '/^CMAKE_BUILD_TYPE:/ {print $2}' "$cache")"
flags="$(awk -F= -v t="CMAKE_CXX_FLAGS_${type^^}:" 'index($0, t) == 1 {print $2}' "$cache")"
echo "Instructions (Ir) per fire, callgrind, $iterations fires per run;" \
     "$("${compiler:-c++}" --version | head -1), ${type:-no build type} ${flags}"
echo
header="| N |"; rule="|---:|"
for c in "${cases[@]}"; do
  header+=" $c |"; rule+="---:|"
  [[ "$c" == hand && " ${cases[*]} " == *" static "* ]] && { header+=" static/hand |"; rule+="---:|"; }
done
echo "$header"; echo "$rule"

status=0
for n in "${counts[@]}"; do
  row="| $n |"
  for c in "${cases[@]}"; do
    row+=" $(per_fire "${ir[$c,$n]}") |"
    if [[ "$c" == hand && -n "${ir[static,$n]:-}" ]]; then
      ratio="$(awk -v s="${ir[static,$n]}" -v h="${ir[hand,$n]}" 'BEGIN { printf "%.4f", s / h }')"
      row+=" $ratio |"
      awk -v r="$ratio" 'BEGIN { exit !(r < 0.99 || r > 1.01) }' && status=1
    fi
  done
  echo "$row"
done

# Cost of one more hook: (Ir(N_max) - Ir(N_min)) / (N_max - N_min), per fire.
lo="${counts[0]}"; hi="${counts[${#counts[@]}-1]}"
if (( hi > lo )); then
  row="| per hook ($lo→$hi) |"
  for c in "${cases[@]}"; do
    row+=" $(awk -v a="${ir[$c,$hi]}" -v b="${ir[$c,$lo]}" -v i="$iterations" -v d="$((hi - lo))" \
               'BEGIN { printf "%.2f", (a - b) / i / d }') |"
    [[ "$c" == hand && -n "${ir[static,$hi]:-}" ]] && row+=" |"
  done
  echo "$row"
fi

echo
if (( status )); then
  echo "FAIL: static and hand-written differ by more than 1% for some N"
else
  echo "OK: static == hand-written within 1% for every N"
fi
exit "$status"
