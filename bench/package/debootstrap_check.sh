#!/usr/bin/env bash
# Opt-in, slow, needs root and the network to a Debian/Ubuntu mirror: not run
# by CTest (tests/package checks the bundle on this host instead).
#
# Unpacks the release bundle into a fresh `debootstrap --variant=minbase`
# system (nothing but the essential packages: glibc, libstdc++, libgcc-s)
# and runs gpudoctor there with an empty environment: --version, status and
# diagnose --checklist without a driver, and serve --no-db accepting a
# connection on loopback.
# What it proves that tests/package cannot: the bundle needs nothing from the
# build host beyond what a minimal system of the floor has.
#
#   sudo bench/package/debootstrap_check.sh [SUITE [MIRROR]]
#     SUITE   default jammy (Ubuntu 22.04, the glibc/libstdc++ floor);
#             bookworm for Debian 12
#     MIRROR  default http://archive.ubuntu.com/ubuntu for jammy,
#             http://deb.debian.org/debian otherwise
#   TARBALL=path/to/gpudoctor-...tar.gz  (default: the one in build/package)
#
# Needs: debootstrap (Debian package debootstrap), root (chroot).
set -euo pipefail
cd "$(dirname "$0")/../.."
suite="${1:-jammy}"
if [[ "$suite" == jammy ]]; then mirror="${2:-http://archive.ubuntu.com/ubuntu}"
else mirror="${2:-http://deb.debian.org/debian}"; fi
tarball="${TARBALL:-$(ls build/package/gpudoctor-*-linux-x86_64.tar.gz | tail -1)}"
[[ -f "$tarball" ]] || { echo "no bundle: run scripts/package.sh first" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "needs root (debootstrap, chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "install debootstrap" >&2; exit 1; }

root=$(mktemp -d /tmp/gd-debootstrap.XXXXXX)
cleanup() {
  umount "$root/proc" 2>/dev/null || true
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT
debootstrap --variant=minbase "$suite" "$root" "$mirror"
mount -t proc proc "$root/proc"
mkdir -p "$root/opt/gpudoctor"
tar -xzf "$tarball" -C "$root/opt/gpudoctor" --strip-components=1

in_root() { chroot "$root" /usr/bin/env -i "$@"; }
in_root /opt/gpudoctor/bin/gpudoctor --version
in_root /opt/gpudoctor/bin/gpudoctor --kmsg none status
rc=0; in_root /opt/gpudoctor/bin/gpudoctor --kmsg none diagnose --checklist || rc=$?
((rc <= 2)) || { echo "diagnose --checklist exited $rc" >&2; exit 1; }
in_root /opt/gpudoctor/bin/gpudoctor --kmsg none serve --listen 127.0.0.1:19856 --no-db &
pid=$!
ok=0
for _ in $(seq 50); do
  # The chroot shares this host's network: connect from here.
  if (exec 3<>/dev/tcp/127.0.0.1/19856) 2>/dev/null; then ok=1; break; fi
  sleep 0.2
done
kill "$pid"; wait "$pid" || true
((ok)) || { echo "serve did not answer" >&2; exit 1; }
echo "debootstrap_check: $suite: the bundle runs"
