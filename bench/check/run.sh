#!/usr/bin/env bash
# Wall time of `gpudoctor check` on 8 fake GPUs (tracegen's idle node),
# without and with the fake NVML's H200 call costs, beside the 3 s goal and
# DCGM's quickest diagnostic (level 1, about 30 s); on a machine with a real
# driver, on its GPUs too.
#   bench/check/run.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: bench/check/run.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
python3 "$here/check_wall.py" "$build/src/cli/gpudoctor" \
  --fake "$build/tests/fake_nvml/lib/libnvidia-ml.so.1" \
  --tracegen "$build/tools/tracegen/gpudoctor-tracegen" \
  --costs "$root/tests/data/real_gpu/nvml-call-costs.txt"
