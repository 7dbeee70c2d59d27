#!/usr/bin/env bash
# History store size and query speed (bench_store): a day of 8 GPUs at 1 Hz
# with 64 processes, as the dashboard issue measures it.
#   bench/store/run.sh [BUILD_DIR]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
"$build/bench/store/bench_store" --hours 24 --gpus 8 --processes 64
