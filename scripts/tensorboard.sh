#!/usr/bin/env bash
# Installs the pinned TensorBoard (PyPI `tensorboard`, whose reader the tests check
# TensorBoardLogger's files with) into a venv at a fixed cache path, reused when present,
# and prints its Python: cmake -DHOOKFORGE_TENSORBOARD_PYTHON="$(scripts/tensorboard.sh)" ...
#
#   HOOKFORGE_CACHE   where the venv goes (default ~/.cache/hookforge); about 180 MB, 20 s
#
# Everything but the path goes to stderr.
set -euo pipefail
. "$(dirname "$0")/venv.sh"

version=2.21.0
cache=${HOOKFORGE_CACHE:-$HOME/.cache/hookforge}
venv=$cache/tensorboard-$version
if ! venv_installed "$venv"; then
  venv_create "$venv" "TensorBoard $version"
  venv_pip "$venv" "tensorboard==$version"
  venv_done "$venv"
fi
echo "$venv/bin/python"
