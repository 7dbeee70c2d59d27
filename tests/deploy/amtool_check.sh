#!/usr/bin/env bash
# amtool_check.sh ALERTMANAGER_YML
# The example Alertmanager config is valid and routes the rules' severities
# where its comments say: critical pages, warning to chat, info nowhere.
set -euo pipefail
config=$1
amtool check-config "$config"
route() {  # RECEIVER LABEL=VALUE...
  local want=$1
  shift
  amtool config routes test --config.file="$config" --verify.receivers="$want" "$@" 2>/dev/null ||
    { echo "FAIL: alert {$*} is not routed to $want"; exit 1; }
}
route gpu-pager severity=critical alertname=GpudoctorFindingCritical id=orphaned-memory
route gpu-chat severity=warning alertname=GpuMemoryAlmostFull
route gpu-chat severity=warning alertname=GpudoctorTargetDown
route null severity=info alertname=GpuSaturated
echo "OK: $config"
