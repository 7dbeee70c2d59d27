#!/usr/bin/env python3
"""Wall time of `gpudoctor check` from process start to exit, on 8 fake GPUs
(tracegen's idle-gpu node replayed by the fake NVML), printed beside the goal
(issue 39: at most 3 s on 8 GPUs) and DCGM's quickest diagnostic (`dcgmi diag
-r 1`, about 30 s as NVIDIA documents it). With --real, on this machine's
own driver and GPUs instead.

Usage: check_wall.py GPUDOCTOR [--fake LIB --tracegen TRACEGEN] [--costs FILE]
                     [--runs N] [--real]
  --costs FILE   also with the fake NVML's cost model (FAKE_NVML_COSTS): each
                 call takes the wall time measured on a real H200"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

GOAL_S = 3.0
DCGM_LEVEL1_S = 30.0

ap = argparse.ArgumentParser(usage=__doc__)
ap.add_argument("gpudoctor")
ap.add_argument("--fake")
ap.add_argument("--tracegen")
ap.add_argument("--costs")
ap.add_argument("--runs", type=int, default=20)
ap.add_argument("--real", action="store_true")
a = ap.parse_args()


def time_runs(args, env):
    subprocess.run(args, env=env, stdout=subprocess.DEVNULL)  # page cache
    walls, codes = [], set()
    for _ in range(a.runs):
        t0 = time.perf_counter()
        p = subprocess.run(args, env=env, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t0)
        codes.add(p.returncode)
    return sorted(walls), codes


def report(label, walls, codes):
    med = statistics.median(walls)
    print(f"check wall time ({label}): median {med * 1000:.0f} ms, "
          f"p90 {walls[int(len(walls) * 0.9)] * 1000:.0f} ms, max {walls[-1] * 1000:.0f} ms "
          f"over {len(walls)} runs (exit {sorted(codes)}); goal {GOAL_S:.0f} s "
          f"({GOAL_S / med:.0f}x under); DCGM level 1 ~{DCGM_LEVEL1_S:.0f} s "
          f"({DCGM_LEVEL1_S / med:.0f}x faster)")


if a.real:
    walls, codes = time_runs([a.gpudoctor, "check"], dict(os.environ))
    report("this machine's driver and GPUs", walls, codes)
else:
    with tempfile.TemporaryDirectory() as tmp:
        scenario = os.path.join(tmp, "idle8.jsonl")
        subprocess.run([a.tracegen, "--scenario", "idle-gpu", "--gpus", "8", "--duration",
                        "10s", "-o", scenario, "-q"], check=True)
        kmsg = os.path.join(tmp, "kern.log")
        open(kmsg, "w").close()
        args = [a.gpudoctor, "--nvml-lib", a.fake, "--kmsg", kmsg, "check"]
        env = dict(os.environ, FAKE_NVML_SCENARIO=scenario)
        env.pop("FAKE_NVML_COSTS", None)
        report("8 fake GPUs", *time_runs(args, env))
        if a.costs:
            env["FAKE_NVML_COSTS"] = a.costs
            report("8 fake GPUs, H200 call costs", *time_runs(args, env))
