#!/usr/bin/env bash
# Installs the pinned TensorBoard (PyPI `tensorboard`, whose reader the tests check
# TensorBoardLogger's files with) and its PyTorch profiler plugin (`torch-tb-profiler`, whose
# loader the tests read ProfilerHook's traces with) into a venv at a fixed cache path, reused
# when present, and prints its Python:
#   cmake -DHOOKFORGE_TENSORBOARD_PYTHON="$(scripts/tensorboard.sh)" ...
#
#   HOOKFORGE_CACHE   where the venv goes (default ~/.cache/hookforge); about 300 MB, 40 s
#
# Everything but the path goes to stderr.
set -euo pipefail
. "$(dirname "$0")/venv.sh"

version=2.21.0
plugin=0.4.3
cache=${HOOKFORGE_CACHE:-$HOME/.cache/hookforge}
venv=$cache/tensorboard-$version-profiler-$plugin
if ! venv_installed "$venv"; then
  venv_create "$venv" "TensorBoard $version and torch-tb-profiler $plugin"
  venv_pip "$venv" "tensorboard==$version" "torch-tb-profiler==$plugin"
  venv_done "$venv"
fi
echo "$venv/bin/python"
