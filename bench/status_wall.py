#!/usr/bin/env python3
"""Wall time of `gpudoctor status` from process start to exit.
Goal (issue 3): under 50 ms. Usage: status_wall.py GPUDOCTOR [FAKE_LIB SCENARIO]"""
import os
import statistics
import subprocess
import sys
import time

exe = sys.argv[1]
env = dict(os.environ)
args = [exe, "--kmsg", "none"]
label = "no driver"
if len(sys.argv) > 3:
    args += ["--nvml-lib", sys.argv[2]]
    env["FAKE_NVML_SCENARIO"] = sys.argv[3]
    label = "fake NVML, " + os.path.basename(sys.argv[3])
else:
    args += ["--nvml-lib", "/nonexistent/libnvidia-ml.so.1"]
args.append("status")

runs = []
for _ in range(30):
    t0 = time.perf_counter()
    subprocess.run(args, env=env, stdout=subprocess.DEVNULL, check=True)
    runs.append((time.perf_counter() - t0) * 1000)
runs.sort()
print(f"status wall time ({label}): median {statistics.median(runs):.1f} ms, "
      f"p90 {runs[int(len(runs) * 0.9)]:.1f} ms, min {runs[0]:.1f} ms over {len(runs)} runs")
