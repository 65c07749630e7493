#!/usr/bin/env bash
# Builds and runs hookforge's main job: ./scripts/run.sh [example]
# The main job is the custom-runner example; name another to run it instead:
#   custom_runner (default), torch_training, adversarial_runner
set -euo pipefail
cd "$(dirname "$0")/.."
build=${HOOKFORGE_BUILD_DIR:-build}
example=${1:-custom_runner}
case "$example" in
  custom_runner|torch_training|adversarial_runner) ;;
  *) echo "run.sh: unknown example '$example' (custom_runner, torch_training, adversarial_runner)" >&2; exit 2 ;;
esac

bash scripts/deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)" --target "hookforge_example_$example"
"$build/examples/hookforge_example_$example"
