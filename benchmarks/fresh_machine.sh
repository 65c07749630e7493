#!/usr/bin/env bash
# The README's first command on a fresh Debian 12: debootstraps a minimal root (with
# ca-certificates and git, what a user needs to get the sources), copies the sources in,
# and times `scripts/deps.sh PURPOSE` there (apt's download and installed sizes in its log);
# with --build, then `./scripts/run.sh --check` (builds hookforge-run with only those
# packages). Root only; the root is removed at the end, its mounts first.
#   sudo benchmarks/fresh_machine.sh run            # what ./scripts/run.sh installs
#   sudo benchmarks/fresh_machine.sh "run test"     # what ./scripts/test.sh installs
#   sudo benchmarks/fresh_machine.sh run --build
set -euo pipefail
purpose=${1:?usage: fresh_machine.sh PURPOSE [--build]}
build=${2:-}
src=$(cd "$(dirname "$0")/.." && pwd)
root=$(mktemp -d "${TMPDIR:-/var/tmp}/hookforge-fresh.XXXXXX")
chmod 755 "$root"  # its /: packages that run scripts as a user of their own (munge) need to enter it
mounts=(proc sys dev dev/pts)

unmount() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    mountpoint -q "$root/${mounts[i]}" && umount "$root/${mounts[i]}"
  done
  # --one-file-system: never into a mount that is still there
  rm -rf --one-file-system "$root"
}
trap unmount EXIT

command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap
debootstrap --variant=minbase --include=ca-certificates,git bookworm "$root" http://deb.debian.org/debian >/dev/null
cp /etc/resolv.conf "$root/etc/"
if [ -f /etc/apt/sources.list.d/debian.sources ]; then  # this machine's mirrors, updates and security
  cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/" && rm "$root/etc/apt/sources.list"
fi
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"  # packages start no services
chmod +x "$root/usr/sbin/policy-rc.d"
mkdir "$root/src" && git -C "$src" archive HEAD | tar -x -C "$root/src"  # the sources as committed
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --bind /dev "$root/dev"
mount -t devpts devpts "$root/dev/pts" -o newinstance,ptmxmode=0666

in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 bash -c "cd /src && $*"; }
before=$(du -sxm "$root" | cut -f1)
start=$(date +%s.%N)
log=${TMPDIR:-/tmp}/hookforge-fresh-deps.log
in_root "bash scripts/deps.sh $purpose" >"$log" 2>&1 || { tail -30 "$log"; exit 1; }
seconds=$(echo "$(date +%s.%N) - $start" | bc)
downloaded=$(du -cm "$root"/var/cache/apt/archives/*.deb | tail -1 | cut -f1)
echo "deps.sh $purpose: $seconds s, $downloaded MB downloaded; the root grew from $before to $(du -sxm "$root" | cut -f1) MB"
if [ "$build" = --build ]; then
  start=$(date +%s.%N)
  in_root "./scripts/run.sh --check" | tail -2
  echo "run.sh --check: $(echo "$(date +%s.%N) - $start" | bc) s"
fi
