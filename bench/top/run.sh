#!/usr/bin/env bash
# `gpudoctor top`: a frame (rows, layout, drawing), then the CPU and RSS of
# the running TUI at 1 Hz with 8 fake GPUs and ~500 processes beside nvtop
# (built from Debian's source package in a temp folder), and the time to
# the first full frame.
#   bench/top/run.sh BUILD_DIR [SECONDS]
set -euo pipefail
build=$1
seconds=${2:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
echo "-- one frame, 8 GPUs and ~500 processes; goal < 1 ms at 200x60"
"$build/bench/top/bench_top_frame" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
nvdir=${NVTOP_DIR:-${TMPDIR:-/tmp}/gpudoctor-bench-nvtop}
nvtop_out=$("$root/bench/top/get_nvtop.sh" "$nvdir" 2>&1) || true
echo "$nvtop_out" | sed '$d'
nvtop=$(echo "$nvtop_out" | tail -1)
[[ -x "$nvtop" ]] || { echo "$nvtop"; nvtop=""; }
echo "-- top at 1 Hz; goals (issue 44): CPU at most 2x nvtop's, RSS at most 12 MiB, first frame < 100 ms"
python3 "$root/bench/top/top_cost.py" "$build/src/cli/gpudoctor" \
  "$build/tests/fake_nvml/lib/libnvidia-ml.so.1" "$root/tests/data/scenario_4gpu.jsonl" \
  --seconds "$seconds" ${nvtop:+--nvtop "$nvtop"}
