#!/usr/bin/env bash
# Builds hookforge and runs every test: ./scripts/test.sh [build-dir]
# Two compilers: GCC builds and tests everything in <build-dir>; Clang (clang++-19, or
# $HOOKFORGE_CLANG) builds the torch-free core again in <build-dir>-clang and runs its
# unit and compile-fail tests, whose expected messages hold for both compilers.
# LibTorch 1.13's headers do not parse with Clang, so the torch layer is tested with GCC only.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
clang=${HOOKFORGE_CLANG:-clang++-19}

bash scripts/deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" -j "$(nproc)" --output-on-failure

echo "hookforge: the torch-free core with $clang"
cmake -S . -B "$build-clang" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$clang" \
      -DHOOKFORGE_WITH_TORCH=OFF -DHOOKFORGE_BUILD_EXAMPLES=OFF -DHOOKFORGE_BUILD_BENCHMARKS=OFF
cmake --build "$build-clang" -j "$(nproc)" --target hookforge_core_tests
ctest --test-dir "$build-clang" -j "$(nproc)" --output-on-failure -R "^(core|compile-fail)"
