#!/usr/bin/env python3
"""Writes src/cli/hot-functions.txt: the functions of `gpudoctor` that a
running `top` executes once start-up is over, which the link lays out first
(src/cli/CMakeLists.txt says why). `top` runs under callgrind on the same
workload as top_cost.py (8 fake GPUs, 8 jobs of 61 workers); its counts are
zeroed once start-up is over and dumped after SECONDS (more than a minute,
so that the findings' evaluation, at most 60 s apart, is in it). Every
function of the gpudoctor binary with instructions counted is listed, by
its mangled name, sorted.

    hot_functions.py GPUDOCTOR FAKE_NVML SCENARIO_4GPU [--seconds 150] [--out FILE]

Run it on a Release build of this tree (GCC, -O2): the names of GCC's
clones (.isra, .constprop, .part) are the compiler's. Needs valgrind.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import top_cost  # noqa: E402

NAMED = re.compile(r"^(ob|cob|fn|cfn)=\((\d+)\)(?: (.*))?$")
COST = re.compile(r"^[+-]?\d+ \d+")


def executed(dump, binary_suffix):
    """Functions of the object ending in binary_suffix that have cost in a
    callgrind dump (name compression and call lines followed)."""
    objects, functions = {}, {}
    current_object, current_fn = None, None
    after_calls = False
    cost = {}
    with open(dump) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("calls="):
                after_calls = True  # the next cost line is the callee's
                continue
            m = NAMED.match(line)
            if m:
                kind, ident, name = m.groups()
                table = objects if kind in ("ob", "cob") else functions
                if name is not None:
                    table[ident] = name
                if kind == "ob":
                    current_object = objects[ident]
                elif kind == "fn":
                    current_fn = (current_object, functions[ident])
                continue
            if current_fn and COST.match(line):
                if after_calls:
                    after_calls = False
                    continue
                cost[current_fn] = cost.get(current_fn, 0) + int(line.split()[1])
    names = set()
    for (obj, fn), c in cost.items():
        if obj and obj.endswith(binary_suffix) and c > 0:
            names.add(re.sub(r"'\d+$", "", fn))  # callgrind's recursion mark
    return sorted(names)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpudoctor")
    ap.add_argument("fake_nvml")
    ap.add_argument("scenario")
    ap.add_argument("--seconds", type=int, default=150)
    ap.add_argument("--warmup", type=int, default=40, help="seconds under callgrind before zeroing")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "..", "..", "src", "cli", "hot-functions.txt"))
    a = ap.parse_args()
    jobs = top_cost.spawn_jobs()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = top_cost.eight_gpu_scenario(a.scenario, [j.pid for j in jobs], tmp)
            env = dict(os.environ, FAKE_NVML_SCENARIO=path, TERM="xterm-256color",
                       LANG="C.UTF-8")
            out = os.path.join(tmp, "callgrind.out")
            p, master = top_cost.in_pty(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                 "--demangle=no", a.gpudoctor, "--nvml-lib", a.fake_nvml, "--kmsg", "none", "top"],
                env)
            time.sleep(a.warmup)
            subprocess.run(["callgrind_control", "-z", str(p.pid)], check=True,
                           stdout=subprocess.DEVNULL)
            time.sleep(a.seconds)
            subprocess.run(["callgrind_control", "-d", str(p.pid)], check=True,
                           stdout=subprocess.DEVNULL)
            os.killpg(p.pid, signal.SIGTERM)
            p.wait()
            os.close(master)
            dumps = sorted(f for f in os.listdir(tmp) if f.startswith("callgrind.out."))
            if not dumps:
                sys.exit("hot_functions: callgrind wrote no dump")
            names = executed(os.path.join(tmp, dumps[0]), "/" + os.path.basename(a.gpudoctor))
    finally:
        top_cost.end_jobs(jobs)
    with open(a.out, "w") as f:
        f.write("".join(n + "\n" for n in names))
    print(f"hot_functions: {len(names)} functions written to {a.out}")


if __name__ == "__main__":
    main()
