"""Traces whose samples list huge numbers of processes (issue: hostile files).

A trace line is written by someone else: a hand-made or hostile line may list
hundreds of thousands of processes. `diagnose --from` and `top --from` keep a
sample's processes within the per-sample budget serve uses (512, the GPU
processes and their ancestors first), say how many they left out, and hold
memory that does not grow with the line or with the number of such lines.
"""
import json
import os
import re
import subprocess
import sys
import threading
import unittest

from gd_e2e import E2E, GPUDOCTOR, RSS_LIMIT_FACTOR, load_scenario, scenario_4gpu
from gd_tmux import Tmux
from test_top import TopE2E

KEPT = 512
# Peak RSS, measured on a normal build: diagnose of one 58 MB line ~350 MiB
# (unbounded: 523 MiB), of twenty 28 MB lines ~250 MiB (6.8 GB for twenty
# 60 MB lines unbounded), top --from of one 58 MB line ~300 MiB (1.9 GB).
# Most of it is parsing the one line in flight (about ten bytes per byte).
RSS_LIMIT_MIB = 450 * RSS_LIMIT_FACTOR

# Writes a trace to stdout: the 4-GPU scenario's header and COUNT samples,
# each with EXTRA worker processes (children of pid 1) after the job's own,
# or before them with JOB_LAST. A child process writes it, so the test
# itself never holds the lines (a child forked from a big parent would
# count the parent's memory in its own peak).
GEN = r"""
import json, sys
src, extra, count, job_last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
lines = open(src).read().splitlines()
header, base = lines[0], json.loads(lines[1])
procs = ",".join(
    '{"pid":%d,"ppid":1,"user":"mallory","name":"w","cmdline":"w --x %d",'
    '"state":"S","cpu_pct":0.0,"threads":1,"rss_bytes":4096,"cgroup":null}'
    % (200000 + i, i) for i in range(extra))
own = ",".join(json.dumps(p) for p in base["processes"])
rest = json.dumps({k: v for k, v in base.items() if k not in ("t", "processes")})[1:]
listed = (procs, own) if job_last else (own, procs)
out = sys.stdout
out.write(header + "\n")
for k in range(count):
    out.write('{"t":%s,"processes":[%s,%s],%s\n' % ((base["t"] + k,) + listed + (rest,)))
"""


def own_processes():
    _, samples = load_scenario(scenario_4gpu())
    return len(samples[0]["processes"])


def generator(extra, count, job_last=False, stdout=subprocess.PIPE):
    return subprocess.Popen([sys.executable, "-c", GEN, scenario_4gpu(), str(extra),
                             str(count), "1" if job_last else "0"], stdout=stdout)


def write_huge(path, extra, count, job_last=False):
    with open(path, "w") as f:
        g = generator(extra, count, job_last, stdout=f)
        if g.wait() != 0:
            raise AssertionError("the trace generator failed")


def run_measured(args, stdin=None):
    """Runs gpudoctor; returns (exit code, stdout, stderr, peak RSS in MiB)."""
    p = subprocess.Popen([GPUDOCTOR, "--kmsg", "none"] + args, stdin=stdin,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if stdin is not None:
        stdin.close()  # gpudoctor's copy stays open
    out = {}

    def drain(name, f):
        out[name] = f.read()
    readers = [threading.Thread(target=drain, args=(n, f))
               for n, f in (("out", p.stdout), ("err", p.stderr))]
    for r in readers:
        r.start()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    for r in readers:
        r.join()
    return (p.returncode, out["out"].decode(), out["err"].decode(),
            usage.ru_maxrss / 1024)


class DiagnoseHugeSamples(E2E):
    def test_one_line_with_400k_processes_keeps_the_job_and_says_what_it_left_out(self):
        own = own_processes()
        path = os.path.join(self.tmp.name, "huge.jsonl")
        write_huge(path, 400000, 1)
        self.assertGreater(os.path.getsize(path), 50 << 20)
        code, out, err, rss = run_measured(["diagnose", "--from", path, "--json"])
        self.assertIn(code, (0, 1, 2), err)
        window = json.loads(out)["window"]
        self.assertEqual(window["samples"], 1)
        self.assertEqual(window["processes_left_out"],
                         {"samples": 1, "most_in_one_sample": own + 400000 - KEPT})
        self.assertLess(rss, RSS_LIMIT_MIB, f"diagnose of one huge line peaked at {rss:.0f} MiB")

        code, out, err, _ = run_measured(["diagnose", "--from", path])
        self.assertIn("1 sample listed more processes than the 512 a sample keeps", out)
        self.assertIn(f"up to {own + 400000 - KEPT} left out of one", out)

    def test_twenty_huge_lines_cost_what_one_does(self):
        # Twenty lines of 28 MB each, streamed through a pipe: the peak is
        # that of one such line, not twenty.
        path = os.path.join(self.tmp.name, "one.jsonl")
        write_huge(path, 200000, 1)
        _, _, _, rss_one = run_measured(["diagnose", "--from", path, "--json"])
        gen = generator(200000, 20)
        code, out, err, rss = run_measured(["diagnose", "--from", "-", "--json"],
                                           stdin=gen.stdout)
        self.assertEqual(gen.wait(), 0)
        self.assertIn(code, (0, 1, 2), err)
        window = json.loads(out)["window"]
        self.assertEqual(window["samples"], 20)
        self.assertEqual(window["processes_left_out"]["samples"], 20)
        self.assertLess(rss, RSS_LIMIT_MIB,
                        f"diagnose of twenty huge lines peaked at {rss:.0f} MiB")
        self.assertLess(rss, 1.5 * rss_one,
                        f"twenty lines peaked at {rss:.0f} MiB, one at {rss_one:.0f} MiB")


class TopHugeSamples(TopE2E):
    def test_top_from_a_huge_line_shows_the_job_and_the_count_left_out(self):
        # The job's processes come after 400,000 others: the budget keeps
        # the GPU processes first, so top still lists them.
        own = own_processes()
        path = os.path.join(self.tmp.name, "huge.jsonl")
        write_huge(path, 400000, 1, job_last=True)
        pane = Tmux(self.tmp.name, [GPUDOCTOR, "--kmsg", "none", "top", "--from", path],
                    env={"LANG": "C.UTF-8"}, width=160, height=50)
        self.panes.append(pane)
        s = pane.wait_for(r"more processes left out of this sample", timeout=60)
        self.assertIn(f"{own + 400000 - KEPT} more processes left out", s)
        self.assertIn("train.py", s)  # the job's own processes are listed
        pid = pane.program_pid()
        with open(f"/proc/{pid}/status") as f:
            hwm = int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1)) / 1024
        self.assertLess(hwm, RSS_LIMIT_MIB, f"top --from peaked at {hwm:.0f} MiB")
        pane.keys("q")
        pane.wait_for(r"EXIT=0", timeout=20)


if __name__ == "__main__":
    unittest.main()
