#!/usr/bin/env bash
# need_tool.sh TOOL DEBIAN_PACKAGE -- COMMAND...
# Runs COMMAND when TOOL is on PATH; otherwise prints why the test is skipped
# and exits 77, which CMake's SKIP_RETURN_CODE turns into "Skipped".
set -euo pipefail
tool=$1 pkg=$2
shift 2
[[ "${1:-}" == "--" ]] && shift
if ! command -v "$tool" >/dev/null 2>&1; then
  echo "SKIP: $tool not found; install the Debian package '$pkg' (scripts/install-deps.sh --test)"
  exit 77
fi
exec "$@"
