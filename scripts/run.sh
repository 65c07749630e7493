#!/usr/bin/env bash
# Builds and runs hookforge's main job: ./scripts/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=${HOOKFORGE_BUILD_DIR:-build}

bash scripts/deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)" --target hookforge_example_custom_runner
"$build/examples/hookforge_example_custom_runner" "$@"
