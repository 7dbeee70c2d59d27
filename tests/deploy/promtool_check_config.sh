#!/usr/bin/env bash
# promtool_check_config.sh CONFIG
# `promtool check config` (which also checks the rule files and file_sd
# target files the config names). Debian's prometheus package is built
# without Kubernetes service discovery: on such a promtool each
# kubernetes_sd_configs block is checked here against the fields Prometheus
# documents for it, and promtool checks the rest of the config (relabelling,
# rule files, ...) with the block replaced by a static target. Nothing is
# skipped.
set -euo pipefail
config=$1
rc=0
out=$(promtool check config "$config" 2>&1) || rc=$?
if ((rc == 0)) || ! grep -q "field kubernetes_sd_configs not found" <<<"$out"; then
  echo "$out"
  exit "$rc"
fi
echo "this promtool has no Kubernetes discovery: checking those blocks here"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp -r "$(dirname "$config")"/. "$dir"/
python3 - "$config" "$dir/$(basename "$config")" <<'PY'
import sys, yaml
ROLES = {"node", "service", "pod", "endpoints", "endpointslice", "ingress"}
KEYS = {"api_server", "role", "kubeconfig_file", "namespaces", "selectors",
        "attach_metadata", "basic_auth", "authorization", "oauth2",
        "follow_redirects", "enable_http2", "tls_config", "proxy_url",
        "bearer_token", "bearer_token_file"}
NS_KEYS = {"names", "own_namespace"}
src, dst = sys.argv[1], sys.argv[2]
cfg = yaml.safe_load(open(src))
errors = []
for job in cfg.get("scrape_configs", []):
    blocks = job.pop("kubernetes_sd_configs", None)
    if blocks is None:
        continue
    name = job.get("job_name", "?")
    for b in blocks:
        for k in set(b) - KEYS:
            errors.append(f"{name}: kubernetes_sd_configs: unknown field {k!r}")
        if b.get("role") not in ROLES:
            errors.append(f"{name}: kubernetes_sd_configs: role {b.get('role')!r} is not one of {sorted(ROLES)}")
        for k in set(b.get("namespaces") or {}) - NS_KEYS:
            errors.append(f"{name}: namespaces: unknown field {k!r}")
    job["static_configs"] = [{"targets": ["localhost:9856"]}]
if errors:
    sys.exit("\n".join(errors))
yaml.safe_dump(cfg, open(dst, "w"))
PY
promtool check config "$dir/$(basename "$config")"
