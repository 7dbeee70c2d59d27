#!/usr/bin/env python3
"""Benchmark: `gpudoctor report` over a week of one 8-GPU node at 1 Hz.

gpudoctor-tracegen writes the week (zstd: a plain week is ~6 GB); gpudoctor
reports it by job. Prints the wall time, CPU time and peak RSS of the
report process (getrusage of the child, via wait4) against the goals:
under 2 s and under 200 MB. With --store-fill, the same week also goes into
a history DB the way `serve --db` keeps it, and `report --db` reads that.

usage: report_7d.py TRACEGEN GPUDOCTOR [--store-fill GD_STORE_FILL]
                    [--duration 7d] [--gpus 8] [--processes 16]
                    [--scenario input-bound] [--dir DIR] [--repeat 3]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

GOAL_WALL_S = 2.0
GOAL_RSS_MB = 200.0


def timed(cmd):
    """(wall s, CPU s, peak RSS MB) of one run of cmd, which must exit 0."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    err = proc.stderr.read().decode()
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"{cmd} exited {code}: {err.strip()}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def best(cmd, repeat):
    runs = [timed(cmd) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tracegen")
    ap.add_argument("gpudoctor")
    ap.add_argument("--store-fill", default=None)
    ap.add_argument("--scenario", default="input-bound")
    ap.add_argument("--duration", default="7d")
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--processes", type=int, default=16)
    ap.add_argument("--dir", default=None, help="where to write (default: a temp dir)")
    ap.add_argument("--repeat", type=int, default=3, help="report runs (best is kept)")
    a = ap.parse_args()

    with tempfile.TemporaryDirectory(dir=a.dir) as tmp:
        path = os.path.join(tmp, "week.jsonl.zst")
        t = time.monotonic()
        subprocess.run([a.tracegen, "--scenario", a.scenario, "--gpus", str(a.gpus),
                        "--duration", a.duration, "--interval", "1s",
                        "--processes", str(a.processes), "-q", "-o", path], check=True)
        print(f"trace: {a.scenario}, {a.duration}, {a.gpus} GPUs, 1 Hz, {a.processes} "
              f"processes: {os.path.getsize(path) / 1e6:.1f} MB zstd "
              f"(written in {time.monotonic() - t:.1f} s)")
        results = []
        wall, cpu, rss = best([a.gpudoctor, "report", "--from", path], a.repeat)
        results.append(("report --from (zstd)", wall, cpu, rss))
        if a.store_fill:
            db = os.path.join(tmp, "history.db")
            t = time.monotonic()
            subprocess.run([a.store_fill, "--db", db, "--trace", path], check=True,
                           stdout=subprocess.DEVNULL)
            print(f"history DB: {os.path.getsize(db) / 1e6:.1f} MB "
                  f"(filled in {time.monotonic() - t:.1f} s)")
            wall, cpu, rss = best([a.gpudoctor, "report", "--db", db, "--since", "0"],
                                  a.repeat)
            results.append(("report --db", wall, cpu, rss))
        for name, wall, cpu, rss in results:
            print(f"  {name:<22} {wall:6.2f} s wall, {cpu:6.2f} s CPU (best of "
                  f"{a.repeat}), {rss:6.1f} MB max RSS")
        ok = all(w < GOAL_WALL_S and r < GOAL_RSS_MB for _, w, _, r in results)
        print(f"goals: < {GOAL_WALL_S:.0f} s and < {GOAL_RSS_MB:.0f} MB: "
              f"{'met' if ok else 'MISSED'} (load average {os.getloadavg()[0]:.1f} on "
              f"{os.cpu_count()} CPUs)")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
