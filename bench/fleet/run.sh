#!/usr/bin/env bash
# The dashboard's Fleet page at 2,048 nodes beside 64 (bench/fleet/fleet_page.py,
# about a minute; Debian's chromium and python3-websocket), then diagnose
# --prometheus over a backfilled fleet (bench/fleet/fleet_diagnose.py).
#   bench/fleet/run.sh BUILD_DIR [--nodes 100 --gpus 8 --hours 24 --concurrency 4]
# (the flags are fleet_diagnose.py's).
# The full size (100 x 8 x 24 h) writes ~8 GB of OpenMetrics and backfills
# for a long while; --nodes 10 --hours 2 takes about a minute.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: run.sh BUILD_DIR [flags of fleet_diagnose.py]}
shift
/usr/bin/python3 "$here/fleet_page.py" "$build"
python3 "$here/fleet_diagnose.py" "$build/src/cli/gpudoctor" "$@"
