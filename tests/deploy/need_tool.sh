#!/usr/bin/env bash
# need_tool.sh TOOL DEBIAN_PACKAGE -- COMMAND...
# Runs COMMAND when TOOL is on PATH; otherwise the test fails and says which
# Debian package to install (scripts/install-deps.sh --test installs them all):
# a missing tool must not let the test pass while checking nothing.
set -euo pipefail
tool=$1 pkg=$2
shift 2
[[ "${1:-}" == "--" ]] && shift
if ! command -v "$tool" >/dev/null 2>&1; then
  echo "FAIL: $tool not found; install the Debian package '$pkg' (scripts/install-deps.sh --test)"
  exit 1
fi
exec "$@"
