#!/usr/bin/env bash
# Builds the config loader's libFuzzer target with Clang and runs it for a bounded time:
#   ./scripts/fuzz.sh [SECONDS] [libFuzzer flags...]      (default 60 s)
# The corpus is seeded at run time from fuzz/corpus/ (a small curated set), every *.yaml
# under configs/ and tests/config/ (bad/ included) and copied into a scratch directory,
# so nothing generated lands in the tree; HOOKFORGE_FUZZ_CORPUS=DIR keeps it in DIR instead
# (seeded the same way) to carry on from it. Crashes, leaks, timeouts and out-of-memory
# inputs are written to <build>/fuzz-artifacts/; reproduce one with
#   <build>/fuzz/hookforge_config_fuzzer <build>/fuzz-artifacts/crash-...
# Environment: HOOKFORGE_CLANG (clang++-19), HOOKFORGE_FUZZ_BUILD (build-fuzz), HOOKFORGE_JOBS
# (build jobs; nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
[ $# -gt 0 ] && shift
clang=${HOOKFORGE_CLANG:-clang++-19}
build=${HOOKFORGE_FUZZ_BUILD:-build-fuzz}

bash scripts/deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$clang" \
      -DHOOKFORGE_BUILD_FUZZERS=ON -DHOOKFORGE_WITH_TORCH=OFF -DHOOKFORGE_BUILD_TESTS=OFF \
      -DHOOKFORGE_BUILD_EXAMPLES=OFF -DHOOKFORGE_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" -j "${HOOKFORGE_JOBS:-$(nproc)}" --target hookforge_config_fuzzer

if [ -n "${HOOKFORGE_FUZZ_CORPUS:-}" ]; then
  corpus=$HOOKFORGE_FUZZ_CORPUS
  mkdir -p "$corpus"
else
  corpus=$(mktemp -d "${TMPDIR:-/tmp}/hookforge-fuzz.XXXXXX")
  trap 'rm -rf "$corpus"' EXIT
fi
# Seeds: each file under a name of its own path, so two configs called default.yaml both count.
while IFS= read -r -d '' f; do
  cp "$f" "$corpus/seed-$(printf '%s' "$f" | tr '/' '_')"
done < <(find fuzz/corpus tests/config configs -type f \( -name '*.yaml' -o -path 'fuzz/corpus/*' \
              -o -path 'tests/config/bad/*' \) ! -name expected.txt -print0 2>/dev/null || true)
echo "hookforge: fuzzing the config loader for ${seconds} s, $(ls "$corpus" | wc -l) inputs in $corpus"

artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"
symbolizer=$(command -v llvm-symbolizer-19 || command -v llvm-symbolizer || true)
[ -n "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH=$symbolizer UBSAN_SYMBOLIZER_PATH=$symbolizer
"$build/fuzz/hookforge_config_fuzzer" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
    -dict=fuzz/config.dict -artifact_prefix="$artifacts/" -print_final_stats=1 -print_funcs=0 "$@" "$corpus"
