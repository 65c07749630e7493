#!/usr/bin/env bash
# Builds hookforge and runs every test: ./scripts/test.sh [build-dir]
#
# Stages (each one's time is printed at the end):
#   deps      Debian's packages (scripts/deps.sh), the pinned LibTorch 2.x (scripts/torch.sh) and
#             the pinned TensorBoard whose reader checks TensorBoardLogger, with the profiler
#             plugin whose loader checks ProfilerHook (scripts/tensorboard.sh),
#             the pinned MLflow whose server and client check MLflowLogger (scripts/mlflow.sh),
#             and the peers the parity tests run (Lightning, torchmetrics...: scripts/peers.sh)
#   torch2    GCC against LibTorch 2.11 (the pip wheel, a CUDA build), in <build-dir>-torch2:
#             everything, every test but the header self-containment tests (label `headers`)
#             and the compile-fail cases' twins (`compile-fail-twin`), which clang runs (with
#             the parity tests against the peers, which share this PyTorch); the `cuda` tests
#             are skipped, with the reason, where no GPU is present
#   torch1    GCC against Debian's LibTorch 1.13.1 (CPU), in <build-dir>: everything but the
#             examples, which torch2 builds and runs (their code is plain LibTorch and the API
#             the tests cover on 1.13 too), with the weights interop tests (their Python side in
#             the 2.x venv), the MLflow server test, and every
#             test but those whose verdict does not depend on LibTorch's version, which ran
#             in torch2 or clang: the header self-containment tests (label `headers`:
#             hookforge's headers, not LibTorch's), the callgrind dispatch check (`callgrind`, torch-free),
#             the clang-format check (`format`), and the compile-fail, malformed-config and
#             some consumer tests (`libtorch-independent`)
#   clang     clang++-19 (or $HOOKFORGE_CLANG) against LibTorch 2.11, in <build-dir>-clang: the
#             core's unit tests, the compiled torch layer, every compile-fail test (C++20
#             and C++26, whose messages are composed) with the twins (C++20), and the header
#             self-containment tests: which headers a header must include is the same for
#             GCC (both use libstdc++), and Clang reads the precompiled LibTorch headers they
#             share lazily, in about three quarters of GCC's time
#   fuzz      the config loader, the weights readers and the image readers under libFuzzer, ASan
#             and UBSan (scripts/fuzz.sh; $HOOKFORGE_FUZZ_SECONDS, 60, each but the images, 30)
#
# HOOKFORGE_STAGES="torch2 clang" runs only those (deps always runs first).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
clang=${HOOKFORGE_CLANG:-clang++-19}
stages=${HOOKFORGE_STAGES:-torch2 torch1 clang fuzz}
jobs=$(nproc)
# ccache keys on paths relative to the checkout, so another clone of it hits the same cache.
export CCACHE_BASEDIR=$PWD

times=()
stage() {  # stage NAME COMMAND...: runs the command and records its wall time
  local name=$1 start=$SECONDS
  shift
  echo "hookforge: === stage $name ==="
  "$@"
  times+=("$(printf '%-8s %4d s' "$name" $((SECONDS - start)))")
}

deps() {
  bash scripts/deps.sh run test
  torch2_prefix=$(bash scripts/torch.sh)
  tensorboard_python=$(bash scripts/tensorboard.sh)
  mlflow_python=$(bash scripts/mlflow.sh)
  peers_python=$(bash scripts/peers.sh)
}

configure_build_test() {  # DIR CTEST_ARGS CMAKE_ARGS...
  local dir=$1 ctest_args=$2
  shift 2
  # Tests on, said each time: scripts/run.sh configures its folder (<build-dir> too) without them.
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHOOKFORGE_WERROR=ON -DHOOKFORGE_BUILD_TESTS=ON \
        -DHOOKFORGE_TENSORBOARD_PYTHON="$tensorboard_python" "$@"
  cmake --build "$dir" -j "$jobs"
  # shellcheck disable=SC2086
  ctest --test-dir "$dir" -j "$jobs" --output-on-failure $ctest_args
}

torch2() {
  configure_build_test "$build-torch2" "-LE ^(headers|compile-fail-twin)$" -DCMAKE_PREFIX_PATH="$torch2_prefix" \
                       -DHOOKFORGE_PEERS_PYTHON="$peers_python"
}
torch1() {
  configure_build_test "$build" "-LE ^(headers|callgrind|format|libtorch-independent)$" -DCMAKE_PREFIX_PATH= \
                       -DHOOKFORGE_INTEROP_PYTHON="$peers_python" -DHOOKFORGE_MLFLOW_PYTHON="$mlflow_python" \
                       -DHOOKFORGE_BUILD_EXAMPLES=OFF
}

clang() {
  cmake -S . -B "$build-clang" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHOOKFORGE_WERROR=ON -DCMAKE_CXX_COMPILER="$clang" \
        -DCMAKE_PREFIX_PATH="$torch2_prefix" -DHOOKFORGE_BUILD_EXAMPLES=OFF -DHOOKFORGE_BUILD_BENCHMARKS=OFF
  cmake --build "$build-clang" -j "$jobs" --target hookforge_core_tests hookforge_torch_compiled
  ctest --test-dir "$build-clang" -j "$jobs" --output-on-failure -R "^(core|compile-fail|header[:,])"
}

fuzz() { bash scripts/fuzz.sh "${HOOKFORGE_FUZZ_SECONDS:-60}"; }

stage deps deps
for s in $stages; do
  case "$s" in
    torch2|torch1|clang|fuzz) stage "$s" "$s" ;;
    *) echo "hookforge: unknown stage '$s' in HOOKFORGE_STAGES (torch2 torch1 clang fuzz)" >&2; exit 2 ;;
  esac
done
echo "hookforge: stage times"
printf '  %s\n' "${times[@]}"
