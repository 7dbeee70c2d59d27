#!/usr/bin/env python3
"""Runs pynvml_style_client.py against the fake NVML with a scenario and
checks that what the client printed is the scenario's first sample, in NVML's
units. Exit status 0 when everything matches; each mismatch is printed.

  check_independent_client.py --client CLIENT_PY --lib LIBNVIDIA_ML --scenario FILE
"""

import argparse
import json
import os
import subprocess
import sys


def expected(scenario_path):
    with open(scenario_path, encoding="utf-8") as f:
        lines = [json.loads(l) for l in f if l.strip()]
    header, first = lines[0], lines[1]
    samples = {g["index"]: g for g in first["gpus"]}
    gpus = []
    for info in header["gpus"]:
        s = samples[info["index"]]
        total, used = info["memory_total_bytes"], s["mem_used_bytes"]
        gpus.append({
            "index": info["index"],
            "name": info["name"],
            "uuid": info["uuid"],
            "memory": {"total": total, "free": total - used, "used": used},
            "memory_v2": {"total": total, "reserved": s["mem_reserved_bytes"],
                          "free": total - used - s["mem_reserved_bytes"], "used": used},
            "remapped_rows": {"correctable": s["remapped_rows_correctable_total"],
                              "uncorrectable": s["remapped_rows_uncorrectable_total"],
                              "pending": int(s["remapped_rows_pending"]),
                              "failure": int(s["remapped_rows_failure"])},
            "utilization": {"gpu": round(s["util_pct"]), "memory": round(s["mem_util_pct"])},
            "temperature_c": s["temp_c"],
            "power_mw": round(s["power_w"] * 1000),
            "compute_processes": [{"pid": p["pid"], "used_gpu_memory": p["used_bytes"]}
                                  for p in s["processes"]
                                  if p["type"] in ("compute", "compute+graphics")],
        })
    return {"driver_version": header["driver"]["driver_version"],
            "device_count": len(header["gpus"]), "gpus": gpus}


def diff(want, got, path="$"):
    if isinstance(want, dict) and isinstance(got, dict):
        out = []
        for k in want:
            out += diff(want[k], got.get(k, "<missing>"), f"{path}.{k}")
        return out
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        return [d for i, (w, g) in enumerate(zip(want, got)) for d in diff(w, g, f"{path}[{i}]")]
    return [] if want == got else [f"{path}: expected {want!r}, client saw {got!r}"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--client", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--scenario", required=True)
    args = ap.parse_args()
    env = dict(os.environ, FAKE_NVML_SCENARIO=args.scenario,
               FAKE_NVML_SPEED="0.000001")  # hold time on the first sample
    run = subprocess.run([sys.executable, args.client, "--lib", args.lib], env=env,
                         capture_output=True, text=True, timeout=60, check=False)
    if run.returncode != 0:
        print(f"client failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
        return 1
    got = json.loads(run.stdout)
    problems = diff(expected(args.scenario), got)
    for p in problems:
        print(p)
    print(f"{len(got.get('gpus', []))} GPUs compared, {len(problems)} mismatches")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
