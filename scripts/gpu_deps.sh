#!/usr/bin/env bash
# Makes build-gpu-deps/: the Debian packages hookforge builds with (headers, libraries, CMake
# configs), extracted with dpkg -x, for a GPU machine that has no Debian packages and no
# network (scripts/gpu_check.sh uses it; the device tool carries it with `carry`).
# Run here, where apt reaches Debian's archive. About 40 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-gpu-deps
packages=(libfmt-dev libfmt9 libyaml-cpp-dev libyaml-cpp0.7 catch2 libbenchmark-dev libbenchmark1debian
          libssl-dev libssl3 libpng-dev libpng16-16 zlib1g-dev zlib1g libgloo-dev)
rm -rf "$out" && mkdir -p "$out/debs" "$out/root"
[ -n "$(ls /var/lib/apt/lists/ 2>/dev/null | grep -v lock)" ] || apt-get update -qq
(cd "$out/debs" && apt-get download -qq "${packages[@]}")
for deb in "$out"/debs/*.deb; do dpkg -x "$deb" "$out/root"; done
rm -rf "$out/debs" "$out/root/usr/share/doc" "$out/root/usr/share/man"
# The CMake configs that name /usr absolutely (yaml-cpp): make those paths relative to the
# config file (four folders below usr/).
grep -rl "\"/usr/" "$out/root/usr/lib/x86_64-linux-gnu/cmake" |
  while read -r f; do sed -i "s#\"/usr/#\"\${CMAKE_CURRENT_LIST_DIR}/../../../../#g" "$f"; done
du -sh "$out"
