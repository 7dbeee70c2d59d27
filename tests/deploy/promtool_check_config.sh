#!/usr/bin/env bash
# promtool_check_config.sh CONFIG
# `promtool check config` (which also checks the rule files and file_sd
# target files the config names). Debian's prometheus package is built
# without Kubernetes service discovery; on such a promtool a config that uses
# kubernetes_sd_configs is skipped (exit 77) instead of failing.
set -euo pipefail
config=$1
rc=0
out=$(promtool check config "$config" 2>&1) || rc=$?
echo "$out"
if ((rc != 0)) && grep -q "field kubernetes_sd_configs not found" <<<"$out"; then
  echo "SKIP: this promtool was built without Kubernetes discovery (Debian's is); $config needs upstream promtool"
  exit 77
fi
exit "$rc"
