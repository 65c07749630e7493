#!/usr/bin/env bash
# The default job in hookforge-run, hookforge's C++ API, a plain LibTorch loop, a plain PyTorch
# loop, Lightning, MMEngine and Ignite, on the same PyTorch 2.x and the same images (compare.py
# says how it measures; docs/benchmarks.md "The whole job" has the table and the figures):
#
#   benchmarks/peers/run.sh [--rounds 3] [--short 1] [--long 3] [--workers 0] [--only NAME...]
#
#   HOOKFORGE_PEERS_BUILD   the build folder against the pinned LibTorch 2.x (default build-torch2;
#                           configured here when it does not exist)
#
# Installs what it needs: the pinned PyTorch wheel (scripts/torch.sh), the pinned peers
# (scripts/peers.sh). About 20 minutes for 3 rounds on 2 cores; run it on an idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${HOOKFORGE_PEERS_BUILD:-build-torch2}
torch_prefix=$(bash scripts/torch.sh)
python=$(bash scripts/peers.sh)
[ -f "$build/build.ninja" ] ||
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_prefix"
cmake --build "$build" --target hookforge-run hookforge_peer_data hookforge_peer_plain hookforge_peer_api
data=$build/peers-data
[ -f "$data/shapes.json" ] || "$build/benchmarks/hookforge_peer_data" "$data"
exec "$python" benchmarks/peers/compare.py --hookforge-run "$PWD/$build/hookforge-run" \
  --plain "$PWD/$build/benchmarks/hookforge_peer_plain" --api "$PWD/$build/benchmarks/hookforge_peer_api" \
  --data "$PWD/$data" --python "$python" \
  --out "$build/peers.json" "$@"
