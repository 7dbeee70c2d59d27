#!/usr/bin/env bash
# Opt-in, slow, needs root and the network to a Debian/Ubuntu mirror: not run
# by CTest (tests/package checks the bundle on this host instead).
# Measured on the Debian 12 build host, bookworm from its own mirror: see
# docs/install.md ("Checked on a minimal system").
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
#     SUITE   default: this host's own (VERSION_CODENAME of /etc/os-release,
#             bookworm on the Debian 12 build host); jammy is Ubuntu 22.04,
#             the glibc floor
#     MIRROR  default: the URI this host's apt sources (/etc/apt/sources.list,
#             /etc/apt/sources.list.d/*.list and *.sources) give for SUITE;
#             a SUITE they do not name (jammy on a Debian host) needs one
#   TARBALL=path/to/gpudoctor-...tar.gz  (default: the one in build/package)
#   KEYRING=path/to/keyring.gpg  passed to debootstrap (--keyring), e.g.
#             ubuntu-keyring's for jammy on a Debian host
#   SCRIPT=name  debootstrap's script for a suite newer than the host's
#             debootstrap knows (Debian 12's has none for noble: SCRIPT=gutsy)
#
# Needs: debootstrap (Debian package debootstrap), root (chroot).
set -euo pipefail
cd "$(dirname "$0")/../.."
# The URI the host's apt sources give for suite $1 (type deb), if any: the
# one-line format and the deb822 .sources format.
apt_mirror_for() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f "$f" ]] || continue
    awk -v s="$1" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++
                                   if ($(i + 1) == s) { print $i; exit } }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] || continue
    awk -v s="$1" 'function flush() { if (deb && uri != "" && (" " suites " ") ~ (" " s " ")) { print uri; found = 1 } }
      /^[ \t]*$/ { flush(); deb = 0; uri = ""; suites = ""; next }
      /^Types:/ { deb = ($0 ~ /[ \t]deb([ \t]|$)/) }
      /^URIs:/ { uri = $2 }
      /^Suites:/ { suites = $0; sub(/^Suites:[ \t]*/, "", suites) }
      /^Enabled:[ \t]*no/ { deb = 0 }
      END { if (!found) flush() }' "$f"
  done | head -1
}
suite="${1:-$(. /etc/os-release && echo "${VERSION_CODENAME:-}")}"
[[ -n "$suite" ]] || { echo "no SUITE given and no VERSION_CODENAME in /etc/os-release" >&2; exit 1; }
mirror="${2:-$(apt_mirror_for "$suite")}"
[[ -n "$mirror" ]] || {
  echo "this host's apt sources name no mirror for $suite: give one (see --help)" >&2; exit 1; }
tarball="${TARBALL:-$(ls build/package/gpudoctor-*-linux-x86_64.tar.gz | tail -1)}"
[[ -f "$tarball" ]] || { echo "no bundle: run scripts/package.sh first" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "needs root (debootstrap, chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "install debootstrap" >&2; exit 1; }

root=$(mktemp -d /tmp/gd-debootstrap.XXXXXX)
pid=""
cleanup() {
  # serve, if a failure left it running: /proc would stay busy.
  if [[ -n "$pid" ]] && kill "$pid" 2>/dev/null; then wait "$pid" || true; fi
  umount "$root/proc" 2>/dev/null || true
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT
start=$(date +%s)
echo "debootstrap_check: $suite from $mirror"
debootstrap --variant=minbase ${KEYRING:+--keyring="$KEYRING"} "$suite" "$root" "$mirror" \
  ${SCRIPT:+"/usr/share/debootstrap/scripts/$SCRIPT"}
echo "debootstrap_check: minbase $suite in $(($(date +%s) - start)) s," \
  "$(du -sm --one-file-system "$root" | cut -f1) MiB"
# What the minimal system has that the bundle takes from it.
chroot "$root" /usr/bin/dpkg-query -W libc6 libstdc++6 libgcc-s1
mount -t proc proc "$root/proc"
mkdir -p "$root/opt/gpudoctor"
tar -xzf "$tarball" -C "$root/opt/gpudoctor" --strip-components=1

in_root() { chroot "$root" /usr/bin/env -i "$@"; }
in_root /opt/gpudoctor/bin/gpudoctor --version
in_root /opt/gpudoctor/bin/gpudoctor --kmsg none status
rc=0; in_root /opt/gpudoctor/bin/gpudoctor --kmsg none diagnose --checklist || rc=$?
((rc <= 2)) || { echo "diagnose --checklist exited $rc" >&2; exit 1; }
# chroot itself in the background (not in_root, a function, whose subshell
# $! would name): chroot and env exec, so $! is serve's own pid.
chroot "$root" /usr/bin/env -i /opt/gpudoctor/bin/gpudoctor --kmsg none serve \
  --listen 127.0.0.1:19856 --no-db &
pid=$!
ok=0
for _ in $(seq 50); do
  # The chroot shares this host's network: connect from here.
  if (exec 3<>/dev/tcp/127.0.0.1/19856) 2>/dev/null; then ok=1; break; fi
  sleep 0.2
done
kill "$pid"; wait "$pid" || true
pid=""
((ok)) || { echo "serve did not answer" >&2; exit 1; }
echo "debootstrap_check: $suite: the bundle runs ($(($(date +%s) - start)) s in all)"
