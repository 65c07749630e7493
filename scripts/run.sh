#!/usr/bin/env bash
# Builds and runs hookforge's main job: hookforge-run on the config embedded in it
# (configs/default.yaml), against Debian's LibTorch 1.13 (docs/libtorch.md for 2.x).
# Arguments go to hookforge-run; `example NAME` runs an example instead.
#   ./scripts/run.sh                                  # the default run
#   ./scripts/run.sh configs/gan_sr.yaml --set trainer.params.epochs=2
#   ./scripts/run.sh --check                          # the default's binding tables, no training
#   ./scripts/run.sh example torch_training           # first_loop, first_trainer, custom_runner,
#                                                     # torch_training, adversarial_runner,
#                                                     # user_hook_run, weights
#   ./scripts/run.sh example weights espcn_python.pth # (examples/weights/README.md)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${HOOKFORGE_BUILD_DIR:-build}
export CCACHE_BASEDIR=$PWD  # as scripts/test.sh: another clone of it hits the same cache

bash scripts/deps.sh run  # the run's packages only; scripts/test.sh installs the tests' too
# Tests off: their packages (Catch2...) are not installed. Said each time, as the build folder
# may be scripts/test.sh's, which turns the tests on and the examples off.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHOOKFORGE_BUILD_TESTS=OFF \
      -DHOOKFORGE_BUILD_EXAMPLES=ON >/dev/null

if [ "${1:-}" = example ]; then
  example=${2:-}
  case "$example" in
    first_loop|first_trainer|custom_runner|torch_training|adversarial_runner|user_hook_run|weights) ;;
    *) echo "run.sh: unknown example '$example' (first_loop, first_trainer, custom_runner, torch_training, adversarial_runner, user_hook_run, weights)" >&2
       exit 2 ;;
  esac
  shift 2
  cmake --build "$build" -j "$(nproc)" --target "hookforge_example_$example"
  exec "$build/examples/hookforge_example_$example" "$@"
fi

cmake --build "$build" -j "$(nproc)" --target hookforge-run
exec "$build/hookforge-run" "$@"
