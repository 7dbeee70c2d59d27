#!/usr/bin/env python3
"""CPU (user + system, from wait4's rusage) and wall time of `gpudoctor
status` beside `nvtop -s` on the same fake NVML scenario (issue 44: status
should cost no more CPU than nvtop -s and take at most half its wall).

Usage: status_cost.py GPUDOCTOR FAKE_LIB SCENARIO [--nvtop NVTOP]
                      [--baseline OTHER_GPUDOCTOR] [--runs N] [--idle N]
  --nvtop NVTOP  an nvtop with -s (--snapshot: 3.1 and newer; on Debian 12,
                 `bench/top/get_nvtop.sh DIR trixie` builds 3.2.0), run with
                 LD_LIBRARY_PATH at the fake library's folder; without one the
                 anchor figures measured beside it are printed instead
  --baseline B   also time binary B (e.g. the commit before), alternating run
                 by run with GPUDOCTOR
  --idle N       first start N idle processes (sleep), as on a busy node, and
                 end them after

Every binary runs in turn, run after run, so that the load of the machine
weighs on each alike; medians and the 10th/90th percentiles are printed with
the load average and the number of processes."""
import argparse
import os
import signal
import statistics
import subprocess
import time

# nvtop 3.2.0 -s on the 2-core build VM, 4-GPU scenario, ~70 processes, 30
# runs (docs/benchmarks.md, 2026-12-06, with the fake NVML that no longer
# zero-fills its trace reader's buffers): the anchor when no nvtop is given.
ANCHOR = "nvtop -s (anchor, docs/benchmarks.md): cpu median 5.5 ms, wall median 6.0 ms"

ap = argparse.ArgumentParser(usage=__doc__)
ap.add_argument("gpudoctor")
ap.add_argument("fake_lib")
ap.add_argument("scenario")
ap.add_argument("--nvtop")
ap.add_argument("--baseline")
ap.add_argument("--runs", type=int, default=30)
ap.add_argument("--idle", type=int, default=0)
a = ap.parse_args()

env = dict(os.environ, FAKE_NVML_SCENARIO=os.path.abspath(a.scenario))
env.pop("FAKE_NVML_COSTS", None)
env.pop("GD_TIMING", None)
lib = os.path.abspath(a.fake_lib)

commands = []
if a.nvtop:
    nv_env = dict(env, LD_LIBRARY_PATH=os.path.dirname(lib))
    commands.append(("nvtop -s", [a.nvtop, "-s"], nv_env))
if a.baseline:
    commands.append(("baseline status", [a.baseline, "--nvml-lib", lib, "status"], env))
commands.append(("status", [a.gpudoctor, "--nvml-lib", lib, "status"], env))


def run_once(argv, e):
    t0 = time.perf_counter()
    with open(os.devnull, "w") as null:
        pid = os.posix_spawn(argv[0], argv, e,
                             file_actions=[(os.POSIX_SPAWN_DUP2, null.fileno(), 1)])
        _, status, ru = os.wait4(pid, 0)
    wall = (time.perf_counter() - t0) * 1000
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} exited with {os.waitstatus_to_exitcode(status)}")
    return wall, (ru.ru_utime + ru.ru_stime) * 1000


idle = None
if a.idle:
    idle = subprocess.Popen(
        ["sh", "-c", f"i=0; while [ $i -lt {a.idle} ]; do sleep 3600 & i=$((i+1)); done; "
         "echo started; wait"], stdout=subprocess.PIPE, text=True, start_new_session=True)
    idle.stdout.readline()
try:
    runs = {name: ([], []) for name, _, _ in commands}
    for _, argv, e in commands:
        run_once(argv, e)  # warm the page cache
    for _ in range(a.runs):
        for name, argv, e in commands:
            wall, cpu = run_once(argv, e)
            runs[name][0].append(wall)
            runs[name][1].append(cpu)
    load = open("/proc/loadavg").read().split()[:3]
    procs = sum(1 for d in os.listdir("/proc") if d.isdigit())
finally:
    if idle:
        os.killpg(idle.pid, signal.SIGKILL)
        idle.wait()

print(f"fake NVML, {os.path.basename(a.scenario)}; {os.cpu_count()} CPUs, load {' '.join(load)}, "
      f"{procs} processes, {a.runs} runs each, alternating")


def pct(v, q):
    return v[min(len(v) - 1, int(len(v) * q))]


medians = {}
for name, _, _ in commands:
    wall, cpu = (sorted(x) for x in runs[name])
    medians[name] = (statistics.median(cpu), statistics.median(wall))
    print(f"{name:16} cpu median {medians[name][0]:7.2f} ms (p10 {pct(cpu, 0.1):.2f}, p90 "
          f"{pct(cpu, 0.9):.2f})   wall median {medians[name][1]:7.2f} ms (p10 "
          f"{pct(wall, 0.1):.2f}, p90 {pct(wall, 0.9):.2f})")
if "nvtop -s" in medians:
    n_cpu, n_wall = medians["nvtop -s"]
    s_cpu, s_wall = medians["status"]
    print(f"status / nvtop -s: cpu {s_cpu / n_cpu:.2f}x (goal <= 1), wall {s_wall / n_wall:.2f}x "
          f"(goal <= 0.5)")
else:
    print(ANCHOR)
