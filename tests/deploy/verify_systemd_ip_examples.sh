#!/usr/bin/env bash
# verify_systemd_ip_examples.sh UNIT BINARY
# The unit's commented IPAddressDeny=/IPAddressAllow= examples are what a
# site uncomments: they must be there (deny by default, loopback allowed)
# and the unit with them uncommented must pass systemd-analyze verify.
set -euo pipefail
unit=$1 binary=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep -qx '#IPAddressDeny=any' "$unit" ||
  { echo "FAIL: no '#IPAddressDeny=any' example in $unit"; exit 1; }
grep -qx '#IPAddressAllow=localhost' "$unit" ||
  { echo "FAIL: no '#IPAddressAllow=localhost' example in $unit"; exit 1; }
sed 's/^#\(IPAddress\(Allow\|Deny\)=\)/\1/' "$unit" > "$tmp/gpudoctor.service"
n=$(grep -c '^IPAddress\(Allow\|Deny\)=' "$tmp/gpudoctor.service")
((n >= 3)) || { echo "FAIL: expected a deny line and allow lines, got $n"; exit 1; }
"$here/verify_systemd_unit.sh" "$tmp/gpudoctor.service" "$binary"
