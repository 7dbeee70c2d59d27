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
import tempfile


NOT_SUPPORTED = {"error": "Not Supported"}
# NVLink generation -> NVML's version enum (nvmlDeviceGetNvLinkVersion).
NVLINK_VERSION_ENUM = {1: 1, 2: 3, 3: 5, 4: 6, 5: 7}
GPM_FIELDS = {"graphics_util": "gr_engine_active_pct", "sm_util": "sm_active_pct",
              "sm_occupancy": "sm_occupancy_pct", "any_tensor_util": "tensor_active_pct",
              "dram_bw_util": "dram_active_pct", "fp64_util": "fp64_active_pct",
              "fp32_util": "fp32_active_pct", "fp16_util": "fp16_active_pct"}


def half_up(x):
    return int(x + 0.5)


def expected_mig(info, s):
    if info.get("mig_enabled") is None:
        return NOT_SUPPORTED
    on = info["mig_enabled"]
    pending = info.get("mig_enabled_pending")
    devices = []
    if on:
        for m in s.get("mig_instances") or []:
            devices.append({"gpu_instance_id": m["gi_id"], "compute_instance_id": m["ci_id"],
                            "uuid": m["uuid"], "name": f"{info['name']} MIG {m['profile']}",
                            "profile": m["profile"],
                            "memory": {"total": m["mem_total_bytes"],
                                       "used": m["mem_used_bytes"]}})
    return {"current": int(on), "pending": int(on if pending is None else pending),
            "devices": devices}


def expected_nvlinks(s):
    return [{"link": l["link"], "active": l["active"],
             "version": NVLINK_VERSION_ENUM[l["version"]],
             "crc_errors": l["crc_errors_total"], "replays": l["replay_total"],
             "recoveries": l["recovery_total"]}
            for l in s.get("nvlinks") or []]


def expected_gpm(info, s):
    if info.get("architecture") not in ("hopper", "blackwell"):
        return {"supported": 0}
    out = {"supported": 1}
    for name, field in GPM_FIELDS.items():
        out[name] = s.get(field)
    return out


def expected_process_utilization(info, s):
    if info.get("mig_enabled"):
        return NOT_SUPPORTED
    return [{"pid": p["pid"], "sm": half_up(p.get("sm_util_pct") or 0),
             "mem": half_up(p.get("mem_util_pct") or 0)}
            for p in s.get("processes") or []
            if p.get("sm_util_pct") is not None or p.get("mem_util_pct") is not None]


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
            # A MIG-enabled GPU has no utilisation of its own.
            "utilization": NOT_SUPPORTED if s.get("util_pct") is None else
            {"gpu": round(s["util_pct"]), "memory": round(s["mem_util_pct"])},
            "temperature_c": s["temp_c"],
            "power_mw": round(s["power_w"] * 1000),
            "compute_processes": [{"pid": p["pid"], "used_gpu_memory": p["used_bytes"],
                                   "gpu_instance_id": p.get("gi_id"),
                                   "compute_instance_id": p.get("ci_id")}
                                  for p in s["processes"]
                                  if p["type"] in ("compute", "compute+graphics")],
            "is_mig_device": 0,
            "mig": expected_mig(info, s),
            "nvlinks": expected_nvlinks(s),
            "gpm": expected_gpm(info, s),
            "process_utilization": expected_process_utilization(info, s),
        })
    return {"driver_version": header["driver"]["driver_version"],
            "device_count": len(header["gpus"]), "gpus": gpus}


def make_scenario(tracegen, scenario, gpus):
    """The last sample of a tracegen scenario as a one-sample scenario."""
    out = os.path.join(tempfile.mkdtemp(prefix="gd_client_"), "scenario.jsonl")
    # Not with this interpreter's preloaded sanitizer runtime (a sanitizer
    # build's LD_PRELOAD): tracegen carries its own, and clang refuses two.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    subprocess.run([tracegen, "--scenario", scenario, "--gpus", str(gpus), "--duration",
                    "90s", "-o", out, "-q"], check=True, timeout=60, env=env)
    with open(out, encoding="utf-8") as f:
        lines = [l for l in f if l.strip()]
    with open(out, "w", encoding="utf-8") as f:
        f.write(lines[0])
        f.write(lines[-1])
    return out


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
    ap.add_argument("--scenario", help="a scenario file")
    ap.add_argument("--tracegen", help="gpudoctor-tracegen, to make the scenario: "
                    "the last sample of --tracegen-scenario on --gpus GPUs")
    ap.add_argument("--tracegen-scenario")
    ap.add_argument("--gpus", type=int, default=1)
    args = ap.parse_args()
    if args.tracegen:
        args.scenario = make_scenario(args.tracegen, args.tracegen_scenario, args.gpus)
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
