#!/usr/bin/env bash
# The dashboard's numbers (web_bench.py): page weight, first chart drawn in
# headless Chromium, serve's CPU with five dashboards open.
#   bench/web/run.sh [BUILD_DIR]
# Needs Debian's chromium and python3-websocket (install-deps.sh --test).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec /usr/bin/python3 "$here/web_bench.py" "${1:-build}"
