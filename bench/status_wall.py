#!/usr/bin/env python3
"""Wall time of `gpudoctor status` from process start to exit.
Goal (issue 3): under 50 ms; on a real GPU (issue 25): at most half of
nvidia-smi's wall on the same machine.

Usage: status_wall.py GPUDOCTOR [FAKE_LIB SCENARIO] [--costs FILE] [--json]
                      [--runs N] [--baseline OTHER_GPUDOCTOR]
  --costs FILE   the fake NVML's cost model (FAKE_NVML_COSTS): each call takes
                 the wall time measured on a real driver, e.g.
                 tests/data/real_gpu/nvml-call-costs.txt (dlopen + nvmlInit
                 11.5 ms, PCIe throughput 20.8 ms, energy 3.2 ms ... an H200)
  --json         `status --json` instead of `status`
  --baseline B   also time binary B (e.g. the commit before), alternating
                 run by run with GPUDOCTOR, and print both medians"""
import argparse
import os
import statistics
import subprocess
import time

ap = argparse.ArgumentParser(usage=__doc__)
ap.add_argument("gpudoctor")
ap.add_argument("fake_lib", nargs="?")
ap.add_argument("scenario", nargs="?")
ap.add_argument("--costs")
ap.add_argument("--json", action="store_true")
ap.add_argument("--runs", type=int, default=30)
ap.add_argument("--baseline")
a = ap.parse_args()

env = dict(os.environ)
label = "no driver"
lib = "/nonexistent/libnvidia-ml.so.1"
if a.scenario:
    lib = a.fake_lib
    env["FAKE_NVML_SCENARIO"] = a.scenario
    label = "fake NVML, " + os.path.basename(a.scenario)
env.pop("FAKE_NVML_COSTS", None)
if a.costs:
    env["FAKE_NVML_COSTS"] = a.costs
    label += ", cost model " + os.path.basename(a.costs)
command = ["status"] + (["--json"] if a.json else [])


def run_once(exe):
    t0 = time.perf_counter()
    subprocess.run([exe, "--kmsg", "none", "--nvml-lib", lib] + command,
                   env=env, stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t0) * 1000


binaries = [("", a.gpudoctor)]
if a.baseline:
    binaries = [("baseline ", a.baseline), ("this build ", a.gpudoctor)]
runs = {exe: [] for _, exe in binaries}
for _, exe in binaries:
    run_once(exe)  # warm the page cache
for _ in range(a.runs):
    for _, exe in binaries:
        runs[exe].append(run_once(exe))
for name, exe in binaries:
    r = sorted(runs[exe])
    print(f"{name}{' '.join(command)} wall time ({label}): median "
          f"{statistics.median(r):.1f} ms, p90 {r[int(len(r) * 0.9)]:.1f} ms, "
          f"min {r[0]:.1f} ms over {len(r)} runs")
