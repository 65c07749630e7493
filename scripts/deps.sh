#!/usr/bin/env bash
# Installs the Debian packages hookforge needs, when they are missing.
# Run as root to install; otherwise it only lists what is missing.
set -euo pipefail

# clang-19 builds and tests the torch-free core a second time (scripts/test.sh).
# libssl-dev: OpenSSL's libcrypto, the SHA-256 of CheckpointSaver's published checkpoints.
# libclang-rt-19-dev: compiler-rt's libFuzzer, ASan and UBSan for the config fuzzer (scripts/fuzz.sh).
# gnuplot-nox: MetricsPlot draws metrics.png with it (a run without it only warns).
# libopenblas0-pthread: LibTorch's CPU BLAS instead of the reference one (see the README's
# note on BLAS). python3: hookforge-run's command-line tests (tests/run/cli.py).
# python3-venv: scripts/torch.sh installs the pinned LibTorch 2.x (the pip wheel) into a venv.
# valgrind: the dispatch check counts instructions under callgrind (tests/CMakeLists.txt).
# clang-format-19: the CTest test `format` (scripts/format.sh --check).
# libturbojpeg0-dev: ImageFolder reads JPEG files with libjpeg-turbo (PNG with libpng).
# nlohmann-json3-dev: the JSON header of safetensors files (hookforge/torch/weights/).
# python3-skimage: the real photographs configs/sr_photos.yaml trains on (its tests check it).
# slurmctld, slurmd, slurm-client, munge: the one-node Slurm cluster of tests/run/cluster.py's Slurm test.
packages=(cmake ninja-build g++ clang-19 ccache libfmt-dev libyaml-cpp-dev nlohmann-json3-dev catch2
          libbenchmark-dev libtorch-dev libgloo-dev libpng-dev libturbojpeg0-dev libssl-dev libclang-rt-19-dev
          python3-skimage slurmctld slurmd slurm-client munge
          gnuplot-nox libopenblas0-pthread python3 python3-venv valgrind clang-format-19)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "hookforge: missing Debian packages: ${missing[*]}" >&2
  echo "hookforge: install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "hookforge: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
