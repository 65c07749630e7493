#!/usr/bin/env bash
# Installs the pinned MLflow (PyPI `mlflow`; the MLflowLogger test starts `mlflow server` from
# it and reads the runs back with MLflow's own Python client) into a venv at a fixed cache path,
# reused when present, and prints its Python: cmake -DHOOKFORGE_MLFLOW_PYTHON="$(scripts/mlflow.sh)" ...
#
#   HOOKFORGE_CACHE   where the venv goes (default ~/.cache/hookforge); about 860 MB, 40 s
#
# Everything but the path goes to stderr.
set -euo pipefail
. "$(dirname "$0")/venv.sh"

version=3.17.2
cache=${HOOKFORGE_CACHE:-$HOME/.cache/hookforge}
venv=$cache/mlflow-$version
if ! venv_installed "$venv"; then
  venv_create "$venv" "MLflow $version"
  venv_pip "$venv" "mlflow==$version"
  venv_done "$venv"
fi
echo "$venv/bin/python"
