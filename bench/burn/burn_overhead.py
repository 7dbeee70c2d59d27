#!/usr/bin/env python3
"""burn's own CPU cost (sampling NVML/host/kernel log, the diagnosis, launching,
checking results) over a run of 8 fake GPUs, against the fake GPUs' own CPU
(the fake libcuda emulates every kernel on the CPU in threads named
"fake-gpu"). Per-thread CPU time is read from /proc/PID/task/*/stat while the
run goes on (the last reading of each thread counts), the process total from
getrusage after it exits.
    burn_overhead.py GPUDOCTOR FAKE_NVML FAKE_CUDA [--duration 30] [--gpus 8]
"""
import argparse
import copy
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def thread_cpu(pid):
    """{tid: (name, cpu seconds)} of a live process."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        out[tid] = (name, (int(fields[11]) + int(fields[12])) / TICK)
    return out


def scenario(path, gpus, seconds):
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    with open(os.path.join(root, "tests", "data", "scenario_4gpu.jsonl")) as f:
        header = json.loads(f.readline())
        sample = json.loads(f.readline())
    proto, reading = header["gpus"][0], sample["gpus"][0]
    header["gpus"], readings = [], []
    for i in range(gpus):
        g = copy.deepcopy(proto)
        g.update(index=i, pci_bus_id=f"00000000:{0x07 + i * 0x1f:02X}:00.0",
                 uuid=f"GPU-00000000-0000-4000-8000-0000000000{i:02d}")
        header["gpus"].append(g)
        r = copy.deepcopy(reading)
        r.update(index=i, processes=[], mem_used_bytes=512 << 20)
        readings.append(r)
    with open(path, "w") as f:
        f.write(json.dumps(header) + "\n")
        for t in range(int(seconds) + 5):
            f.write(json.dumps({"t": sample["t"] + t, "gpus": readings, "host": sample["host"],
                                "processes": [], "events": []}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpudoctor")
    ap.add_argument("fake_nvml")
    ap.add_argument("fake_cuda")
    ap.add_argument("--duration", type=float, default=30)
    ap.add_argument("--gpus", type=int, default=8)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        scen = os.path.join(d, "node.jsonl")
        scenario(scen, a.gpus, a.duration)
        env = dict(os.environ, FAKE_NVML_SCENARIO=scen, FAKE_CUDA_MEMORY_MIB="64")
        env.pop("FAKE_CUDA_FAULTS", None)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.time()
        p = subprocess.Popen([a.gpudoctor, "--nvml-lib", a.fake_nvml, "--kmsg", "none", "burn",
                              "--cuda-lib", a.fake_cuda, "--cublas-lib", "none", "--duration",
                              f"{a.duration}s", "--json"],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        last = {}
        while p.poll() is None:
            for tid, v in thread_cpu(p.pid).items():
                last[tid] = v
            time.sleep(0.05)
        out = p.stdout.read()
        wall = time.time() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = out or ""
    if p.returncode not in (0, 1):
        sys.exit(f"burn exited {p.returncode}: {out}")
    total = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    fake = sum(cpu for name, cpu in last.values() if name.startswith("fake-gpu"))
    # A thread's CPU after its last reading (at most 50 ms before it ended)
    # is not seen; the process total, from getrusage, is exact.
    own = sum(cpu for name, cpu in last.values() if not name.startswith("fake-gpu"))
    by_kind = {}
    for name, cpu in last.values():
        kind = ("GPU threads (launch, check)" if name.startswith("gd-burn-") and name != "gd-burn-watch"
                else "watcher (sampling, diagnosis)" if name == "gd-burn-watch"
                else "fake GPUs (kernel emulation)" if name.startswith("fake-gpu")
                else "other (main, NVML readers)")
        by_kind[kind] = by_kind.get(kind, 0) + cpu
    doc = json.loads(out)
    print(f"burn of {a.gpus} fake GPUs, {a.duration:.0f} s asked, {wall:.1f} s wall "
          f"(verdicts: {', '.join(g['verdict'] for g in doc['gpus'])})")
    for kind, cpu in sorted(by_kind.items()):
        print(f"  {kind:32s} {cpu:7.2f} s CPU")
    print(f"  process total                    {total:7.2f} s CPU")
    print(f"burn's own CPU: {own:.2f} s = {100 * own / wall:.2f}% of one core over the run "
          f"(goal < 2%); {100 * own / total:.1f}% of the process's CPU, the rest is the fake "
          f"GPUs' emulation")


if __name__ == "__main__":
    main()
