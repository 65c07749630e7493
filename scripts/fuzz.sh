#!/usr/bin/env bash
# Builds the libFuzzer targets with Clang and runs each for a bounded time: the config
# loader's beside (on a second core, when there is one) the weights readers' (.pth and
# safetensors) and then the image readers' (PNG, JPEG), both against the pinned LibTorch 2.x;
# each fuzzer's output is printed once it ends (side by side they would interleave):
#   ./scripts/fuzz.sh [SECONDS] [libFuzzer flags...]      (default 60 s each, images 30 s)
# HOOKFORGE_FUZZ_WEIGHTS_SECONDS and HOOKFORGE_FUZZ_IMAGES_SECONDS set those two fuzzers' times
# apart (0: not run); their seeds are fuzz/corpus_weights/ (each a first byte, 0 for a
# data.pkl, 1 for a whole file: fuzz/weights_fuzzer.cpp) and fuzz/corpus_images/, their
# build folder build-fuzz-torch.
# The corpus is seeded at run time from fuzz/corpus/ (a small curated set), every *.yaml
# under configs/ and tests/config/ (bad/ included) and copied into a scratch directory,
# so nothing generated lands in the tree; HOOKFORGE_FUZZ_CORPUS=DIR keeps it in DIR instead
# (DIR/config, DIR/weights, DIR/images, seeded the same way) to carry on from it. Crashes, leaks, timeouts and out-of-memory
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
jobs=${HOOKFORGE_JOBS:-$(nproc)}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$clang" \
      -DHOOKFORGE_BUILD_FUZZERS=ON -DHOOKFORGE_WITH_TORCH=OFF -DHOOKFORGE_BUILD_TESTS=OFF \
      -DHOOKFORGE_BUILD_EXAMPLES=OFF -DHOOKFORGE_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target hookforge_config_fuzzer
# The torch layer's readers, in a build with LibTorch: the weights readers, then the images'.
weights_seconds=${HOOKFORGE_FUZZ_WEIGHTS_SECONDS:-$seconds}
images_seconds=${HOOKFORGE_FUZZ_IMAGES_SECONDS:-30}
torch_build=${build}-torch
if [ "$weights_seconds" -gt 0 ] || [ "$images_seconds" -gt 0 ]; then
  cmake -S . -B "$torch_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$clang" \
        -DCMAKE_PREFIX_PATH="$(bash scripts/torch.sh)" -DHOOKFORGE_BUILD_FUZZERS=ON \
        -DHOOKFORGE_WITH_CONFIG=OFF -DHOOKFORGE_BUILD_COMPILED=OFF -DHOOKFORGE_BUILD_TESTS=OFF \
        -DHOOKFORGE_BUILD_EXAMPLES=OFF -DHOOKFORGE_BUILD_BENCHMARKS=OFF >/dev/null
  cmake --build "$torch_build" -j "$jobs" --target hookforge_weights_fuzzer hookforge_images_fuzzer
fi

if [ -n "${HOOKFORGE_FUZZ_CORPUS:-}" ]; then
  corpus=$HOOKFORGE_FUZZ_CORPUS
  mkdir -p "$corpus"
  logs=$(mktemp -d "${TMPDIR:-/tmp}/hookforge-fuzz-logs.XXXXXX")
  trap 'rm -rf "$logs"' EXIT
else
  corpus=$(mktemp -d "${TMPDIR:-/tmp}/hookforge-fuzz.XXXXXX")
  logs=$corpus/logs
  mkdir -p "$logs"
  trap 'rm -rf "$corpus"' EXIT
fi
# Seeds: each file under a name of its own path, so two configs called default.yaml both count.
mkdir -p "$corpus/config"
while IFS= read -r -d '' f; do
  cp "$f" "$corpus/config/seed-$(printf '%s' "$f" | tr '/' '_')"
done < <(find fuzz/corpus tests/config configs -type f \( -name '*.yaml' -o -path 'fuzz/corpus/*' \
              -o -path 'tests/config/bad/*' \) ! -name expected.txt -print0 2>/dev/null || true)

artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"
symbolizer=$(command -v llvm-symbolizer-19 || command -v llvm-symbolizer || true)
[ -n "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH=$symbolizer UBSAN_SYMBOLIZER_PATH=$symbolizer

# -timeout: a config whose interpolation builds megabyte values (fuzz/corpus's fan-out seed,
# mutated) is read as every type the harness knows, which takes 8 s under the sanitizers: slow,
# not hung. A hang still fails the run, at 30 s.
fuzz_config() {
  echo "hookforge: fuzzing the config loader for ${seconds} s, $(ls "$corpus/config" | wc -l) inputs"
  "$build/fuzz/hookforge_config_fuzzer" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
      -dict=fuzz/config.dict -artifact_prefix="$artifacts/" -print_final_stats=1 -print_funcs=0 \
      "$@" "$corpus/config"
}
# fuzz_torch NAME SECONDS CORPUS_DIR [libFuzzer flags...]: hookforge_NAME_fuzzer, seeded from
# CORPUS_DIR, for SECONDS (0: not run).
fuzz_torch() {
  local name=$1 time=$2 seeds=$3
  shift 3
  [ "$time" -gt 0 ] || return 0
  mkdir -p "$corpus/$name"
  cp "$seeds"/* "$corpus/$name/"
  echo "hookforge: fuzzing the $name readers for ${time} s, $(ls "$corpus/$name" | wc -l) inputs"
  OMP_NUM_THREADS=1 "$torch_build/fuzz/hookforge_${name}_fuzzer" -max_total_time="$time" \
      -artifact_prefix="$artifacts/$name-" -print_final_stats=1 -print_funcs=0 "$@" "$corpus/$name"
}
# The image readers: fuzz/corpus_images/ (small PNGs of each colour type, JPEGs baseline,
# progressive, gray and subsampled). The harness's pixel budget is 4 million: one allocation
# over 256 MB (what a budget-breaking decode would ask for) fails the run.
fuzz_readers() {
  fuzz_torch weights "$weights_seconds" fuzz/corpus_weights -timeout=5 -rss_limit_mb=3072 "$@" &&
    fuzz_torch images "$images_seconds" fuzz/corpus_images -timeout=10 -rss_limit_mb=2048 \
        -malloc_limit_mb=256 "$@"
}
fuzz_config "$@" >"$logs/config.log" 2>&1 &
config_pid=$!
readers_status=0
fuzz_readers "$@" >"$logs/readers.log" 2>&1 || readers_status=$?
config_status=0
wait "$config_pid" || config_status=$?
cat "$logs/config.log" "$logs/readers.log"
for part in "config loader:$config_status" "readers:$readers_status"; do
  [ "${part##*:}" -eq 0 ] || echo "hookforge: the ${part%%:*} fuzzing failed (exit ${part##*:}); inputs in $artifacts" >&2
done
[ "$config_status" -eq 0 ] && [ "$readers_status" -eq 0 ]
