#!/usr/bin/env bash
# Memory and wall time of gpudoctor's pod mapping with a kubelet that lists
# 10,000 pods (and a runtime as many containers), beside the same commands
# with an empty node: `ps --json` (one-shot, waits at most 1 s for the
# names) and `serve` (its pod worker refreshes every 10 s).
#   bench/pods/run.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: bench/pods/run.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# The fake kubelet needs Debian's python3 (python3-grpcio, python3-grpc-tools).
/usr/bin/python3 "$here/pods_10k.py" "$build/src/cli/gpudoctor" \
  --fake "$build/tests/fake_nvml/lib/libnvidia-ml.so.1" \
  --pods-lib "$build/src/pods/libgpudoctor-pods.so" \
  --scenario "$root/tests/data/scenario_4gpu.jsonl" \
  --kubelet "$root/tests/pods/fake_kubelet.py"
