#!/usr/bin/env bash
# Installs the peers hookforge is compared with — Lightning, MMEngine, Ignite, torchmetrics —
# pinned, into a venv at a fixed cache path (reused when present) that sees the pinned
# LibTorch 2.x wheel of scripts/torch.sh through a .pth file (the same PyTorch hookforge
# builds against, not a second copy), and prints its Python:
#   tests/peers/parity.py needs it; cmake -DHOOKFORGE_PEERS_PYTHON="$(scripts/peers.sh)" ...
#
#   HOOKFORGE_CACHE   where the venvs go (default ~/.cache/hookforge); about 60 MB, 25 s
#
# Every package is pinned and installed without its dependencies (they are listed here), so
# pip never fetches a second torch or its CUDA libraries. mmengine-lite is MMEngine without
# OpenCV; its hooks module imports cv2 for a visualisation hook, which the tests stub.
# Everything but the path goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh

torch_prefix=$(bash scripts/torch.sh)
torch_site=$(dirname "$torch_prefix")
cache=${HOOKFORGE_CACHE:-$HOME/.cache/hookforge}
packages=(
  pytorch-lightning==2.6.6 lightning-utilities==0.15.3 torchmetrics==1.9.0
  mmengine-lite==0.10.7 pytorch-ignite==0.5.5
  # what they and torch import
  filelock==4.3.2 fsspec==2026.9.0 Jinja2==3.1.6 MarkupSafe==3.0.4 mpmath==1.4.1
  networkx==3.6.1 numpy==2.4.6 packaging==26.4 PyYAML==6.0.4 sympy==1.14.0 tqdm==4.70.1
  typing_extensions==4.16.0 addict==2.4.0 rich==15.0.0 markdown-it-py==4.3.0 mdurl==0.1.2
  Pygments==2.21.0 termcolor==3.3.0 yapf==0.43.0 platformdirs==4.14.9
  # Hugging Face's safetensors, the reference weights/safetensors.hpp is checked against
  # (tests/weights/safetensors_cases.py); its torch functions use numpy (above) and torch
  safetensors==0.8.0
)
venv=$cache/peers-$(echo "${packages[*]} $torch_site" | sha256sum | cut -c1-12)
if ! venv_installed "$venv"; then
  venv_create "$venv" "the peers (Lightning, MMEngine, Ignite, torchmetrics)"
  echo "$torch_site" > "$(echo "$venv"/lib/python3*/site-packages)/hookforge-torch.pth"
  venv_pip "$venv" --no-deps "${packages[@]}"
  venv_done "$venv"
fi
echo "$venv/bin/python"
