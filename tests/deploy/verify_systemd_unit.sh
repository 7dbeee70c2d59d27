#!/usr/bin/env bash
# verify_systemd_unit.sh UNIT BINARY
# `systemd-analyze verify` on the unit with ExecStart pointed at the built
# binary (verify rejects a command that does not exist). verify exits 0 even
# for unknown keys or unparsable values, so any message about the unit fails
# the test.
set -euo pipefail
unit=$1 binary=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s#/usr/local/bin/gpudoctor#${binary}#" "$unit" > "$tmp/gpudoctor.service"
grep -q "ExecStart=${binary} serve" "$tmp/gpudoctor.service" ||
  { echo "FAIL: no 'ExecStart=/usr/local/bin/gpudoctor serve' in $unit"; exit 1; }
cd "$tmp"
rc=0
out=$(SYSTEMD_LOG_LEVEL=notice systemd-analyze verify "$tmp/gpudoctor.service" 2>&1) || rc=$?
echo "$out"
if ((rc != 0)) || grep -q "gpudoctor.service" <<<"$out"; then
  echo "FAIL: systemd-analyze verify complained about $unit"
  exit 1
fi
echo "OK: $unit"
