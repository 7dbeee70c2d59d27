#!/usr/bin/env bash
# burn's own overhead on the fakes: 8 fake GPUs x 30 s (bench/burn/burn_overhead.py).
#   bench/burn/run.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: run.sh BUILD_DIR}
echo "   burn's own CPU (sampling, diagnosis, launching, checking) over 8 fake GPUs x 30 s;"
echo "   goal < 2% of one core"
python3 "$here/burn_overhead.py" "$build/src/cli/gpudoctor" \
  "$build/tests/fake_nvml/lib/libnvidia-ml.so.1" "$build/tests/fake_cuda/lib/libcuda.so.1" \
  --duration 30 --gpus 8
