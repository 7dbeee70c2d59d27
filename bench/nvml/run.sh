#!/usr/bin/env bash
# What each NVML read of a sample costs on this machine's GPU 0 (a real
# driver); on a machine without one it says so and prints nothing else.
#   bench/nvml/run.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: bench/nvml/run.sh BUILD_DIR}
if ! ldconfig -p | grep -q 'libnvidia-ml\.so\.1 '; then
  echo "no NVIDIA driver here (libnvidia-ml.so.1): nothing to measure"
  exit 0
fi
"$build/bench/nvml/bench_nvml_calls" --reps 20
