#!/usr/bin/env bash
# Installs the Debian packages hookforge needs, when they are missing:
#   scripts/deps.sh run    what scripts/run.sh needs: build hookforge-run and the examples
#                          against Debian's LibTorch 1.13 and run them
#   scripts/deps.sh test   what scripts/test.sh and scripts/fuzz.sh add to those
#   scripts/deps.sh        both (as `run test`)
# Run as root to install; otherwise it only lists what is missing.
set -euo pipefail

run=(
  g++                   # the compiler (GCC 12, C++20)
  cmake ninja-build     # CMake 3.20 or later, and the Ninja generator scripts/run.sh uses
  ccache                # another build folder or clone reuses the compiles (CMakeLists.txt uses it when found)
  libtorch-dev          # LibTorch 1.13.1 (CPU): headers, libraries, TorchConfig.cmake
  libfmt-dev            # {fmt}: the core formats its messages with it
  nlohmann-json3-dev    # the JSON header of safetensors files (hookforge/torch/weights/)
  libssl-dev            # OpenSSL's libcrypto: the SHA-256 of CheckpointSaver's published checkpoints
  libpng-dev            # BatchImageSaver writes PNG files; ImageFolder reads them
  libcurl4-openssl-dev  # MLflowLogger talks to a tracking server with libcurl (HTTP, HTTPS)
  libturbojpeg0-dev     # ImageFolder reads JPEG files with libjpeg-turbo
  libjpeg62-turbo-dev   # its libjpeg.a, which libturbojpeg0-dev's CMake config names (or find_package fails)
  libyaml-cpp-dev       # the config layer reads YAML with yaml-cpp
  libgloo-dev           # Gloo's headers, which c10d's include: hookforge-run --nproc (without it, one rank only)
  gnuplot-nox           # MetricsPlot draws metrics.png with it (a run without it only warns)
  libopenblas0-pthread  # LibTorch's CPU BLAS instead of the reference one (docs/benchmarks.md, "BLAS")
)
test=(
  catch2                # the unit tests' framework (tests/CMakeLists.txt requires Catch2 2)
  clang-19              # scripts/test.sh's clang stage and the fuzzers' compiler (scripts/fuzz.sh)
  libclang-rt-19-dev    # compiler-rt's libFuzzer, ASan and UBSan for the fuzzers (scripts/fuzz.sh)
  libbenchmark-dev      # Google Benchmark: the dispatch benchmarks and the callgrind check's driver
  valgrind              # the dispatch check counts instructions under callgrind (tests/CMakeLists.txt)
  clang-format-19       # the CTest test `format` (scripts/format.sh --check)
  python3               # hookforge-run's command-line tests (tests/run/cli.py)
  python3-venv          # scripts/torch.sh installs the pinned LibTorch 2.x (the pip wheel) into a venv
  python3-skimage       # the photographs configs/sr_photos.yaml trains on (its tests check it)
  slurmctld slurmd slurm-client munge  # the one-node Slurm cluster of tests/run/cluster.py's Slurm test
)

[ $# -eq 0 ] && set -- run test
packages=()
for purpose in "$@"; do
  case "$purpose" in
    run) packages+=("${run[@]}") ;;
    test) packages+=("${test[@]}") ;;
    *) echo "deps.sh: unknown purpose '$purpose' (run, test)" >&2; exit 2 ;;
  esac
done

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
