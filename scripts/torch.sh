#!/usr/bin/env bash
# Installs the pinned LibTorch 2.x (the pip `torch` wheel, a CUDA 13.0 build) into a venv at
# a fixed cache path, reused when present, and prints its CMake prefix (the folder holding
# lib/ and share/cmake/Torch/): cmake -DCMAKE_PREFIX_PATH="$(scripts/torch.sh)" ...
#
#   HOOKFORGE_CACHE         where the venv goes (default ~/.cache/hookforge)
#   HOOKFORGE_TORCH_DEPS    toolkit (default when /usr/local/cuda holds CUDA 13): the wheel alone
#                           (--no-deps) plus the three libraries the CUDA toolkit lacks (cuFile,
#                           cuSPARSELt, NVSHMEM), the rest from the toolkit (about 1.5 GB, 15 s);
#                           full: the wheel with all its nvidia-* packages (about 4.7 GB, 95 s)
#
# Everything but the prefix goes to stderr.
set -euo pipefail
. "$(dirname "$0")/venv.sh"

version=2.11.0
cache=${HOOKFORGE_CACHE:-$HOME/.cache/hookforge}
cuda=${CUDA_HOME:-/usr/local/cuda}
deps=${HOOKFORGE_TORCH_DEPS:-}
if [ -z "$deps" ]; then
  deps=full
  if [ -f "$cuda/include/cuda_runtime_api.h" ] && ls "$cuda"/lib64/libcudart.so.13 >/dev/null 2>&1; then
    deps=toolkit
  fi
fi
case "$deps" in toolkit|full) ;; *) echo "hookforge: HOOKFORGE_TORCH_DEPS is '$deps', expected toolkit or full" >&2; exit 2 ;; esac

venv=$cache/torch-$version-$deps
if ! venv_installed "$venv"; then
  venv_create "$venv" "LibTorch $version ($deps)"
  if [ "$deps" = toolkit ]; then
    # The versions torch $version names in its Requires-Dist.
    venv_pip "$venv" --no-deps "torch==$version" nvidia-cufile==1.15.1.6 nvidia-cusparselt-cu13==0.8.0 \
        nvidia-nvshmem-cu13==3.4.5
  else
    venv_pip "$venv" "torch==$version"
  fi
  venv_done "$venv"
fi
prefix=$(echo "$venv"/lib/python3*/site-packages/torch)
[ -f "$prefix/share/cmake/Torch/TorchConfig.cmake" ] || { echo "hookforge: no TorchConfig.cmake under $prefix; remove $venv and run again" >&2; exit 1; }
echo "$prefix"
