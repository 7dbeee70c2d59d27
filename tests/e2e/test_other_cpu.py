"""host.other_cpu_top end to end (issue 25): real busy processes that belong
to no GPU job are listed as other work; the GPU job's own worker and its
busy launcher (an ancestor) never are."""
import getpass
import json
import os
import subprocess
import sys
import unittest

from gd_e2e import (E2E, load_scenario, read_trace, run, scenario_4gpu, spawn_python, unused_pid,
                    write_scenario)

# A launcher that starts a GPU process (which forks a busy data-loader
# worker) and then burns CPU itself; prints "launcher,trainer,worker".
LAUNCHER = r"""
import os, time
os.setpgid(0, 0)  # so that the test's kill_tree ends the grandchild too
def spin():
    end = time.time() + 120
    while time.time() < end:
        pass
    os._exit(0)
r, w = os.pipe()
trainer = os.fork()
if trainer == 0:
    worker = os.fork()
    if worker == 0:
        spin()
    os.write(w, f"{os.getpid()},{worker}\n".encode())
    time.sleep(120)
    os._exit(0)
line = os.read(r, 100).decode().strip()
print(f"{os.getpid()},{line}", flush=True)
spin()
"""

# Unrelated work: a busy process of the same user, no GPU.
OTHER = r"""
import os, time
print(os.getpid(), flush=True)
end = time.time() + 120
while time.time() < end:
    pass
"""


def one_gpu_process(pid, directory):
    """The 4-GPU scenario's first sample with one process, `pid`, holding
    8 GiB of GPU 0 and no other GPU process; returns the scenario's path."""
    header, samples = load_scenario(scenario_4gpu())
    samples = samples[:1]
    for g in samples[0]["gpus"]:
        g["processes"] = []
    samples[0]["gpus"][0]["processes"] = [
        {"pid": pid, "used_bytes": 8 << 30, "type": "compute"}]
    return write_scenario(header, samples, directory)

class OtherCpu(E2E):
    def setUp(self):
        super().setUp()
        launcher = spawn_python(LAUNCHER)
        self.children.append(launcher)
        self.launcher, self.trainer, self.worker = map(int, launcher.stdout.readline().split(","))
        other = spawn_python(OTHER)
        self.children.append(other)
        self.other = int(other.stdout.readline())
        self.scenario = one_gpu_process(self.trainer, self.tmp.name)

    def test_record_lists_the_unrelated_busy_process_never_the_job_or_its_launcher(self):
        out = os.path.join(self.tmp.name, "rec.jsonl")
        p = run(["--interval", "300ms", "record", "-o", out, "--count", "5"],
                scenario=self.scenario, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        _, samples = load_scenario(out)
        self.assertEqual(len(samples), 5)
        job = {self.launcher, self.trainer, self.worker}
        seen = {}
        for s in samples:
            top = s["host"].get("other_cpu_top")
            self.assertIsNotNone(top, "every sample of a recording looked")
            self.assertLessEqual(len(top), 8)
            cpus = [e["cpu_pct"] for e in top]
            self.assertEqual(cpus, sorted(cpus, reverse=True), "busiest first")
            for e in top:
                self.assertNotIn(e["pid"], job, json.dumps(top))
                seen[e["pid"]] = e
        # The spinner of the unrelated work shows (a 2-core machine shared
        # with builds may not run it every 300 ms, so not in every sample).
        self.assertIn(self.other, seen, json.dumps(samples[-1]["host"]))
        e = seen[self.other]
        with open(f"/proc/{self.other}/comm") as f:
            self.assertEqual(e["comm"], f.read().strip())
        self.assertEqual(e["user"], getpass.getuser())
        self.assertGreater(e["cpu_pct"], 5.0)
        self.assertIn("container", e)
        # The job's processes are in processes[] (the trainer, its worker,
        # its launcher as an ancestor): the split is clean.
        listed = {q["pid"] for q in samples[-1]["processes"]}
        self.assertIn(self.trainer, listed)
        self.assertIn(self.worker, listed)

    def test_status_json_looks(self):
        p = run(["status", "--json"], scenario=self.scenario)
        self.assertEqual(p.returncode, 0, p.stderr)
        _, samples = read_trace(p.stdout)
        top = samples[0]["host"].get("other_cpu_top")
        self.assertIsInstance(top, list, "a one-shot status looks too")
        for e in top:
            self.assertNotIn(e["pid"], (self.launcher, self.trainer, self.worker))

    def test_status_names_the_other_work_and_never_the_job(self):
        # The spinner shows within a few tries on a machine shared with
        # builds (a one-shot's rate window is short).
        line = ""
        for _ in range(5):
            p = run(["status"], scenario=self.scenario)
            self.assertEqual(p.returncode, 0, p.stderr)
            lines = [l for l in p.stdout.splitlines() if "other work (outside the GPU jobs):" in l]
            if lines and f" {self.other} " in lines[0]:
                line = lines[0]
                break
        self.assertTrue(line, p.stdout)
        with open(f"/proc/{self.other}/comm") as f:
            self.assertIn(f"{self.other} {f.read().strip()} ({getpass.getuser()})", line)
        for pid in (self.launcher, self.trainer, self.worker):
            self.assertNotIn(f" {pid} ", line)


# What a dead CUDA process leaves: a process holding its device files
# (nvidia-uvm under a temp dev prefix), here sleeping, with a child that
# closed them and burns CPU. Prints "holder,child".
CUDA_HOLDER = r"""
import os, sys, time
os.setpgid(0, 0)
dev = sys.argv[1]
files = [open(os.path.join(dev, n), "rb") for n in ("nvidiactl", "nvidia0", "nvidia-uvm")]
child = os.fork()
if child == 0:
    for f in files:
        f.close()
    end = time.time() + 120
    while time.time() < end:
        pass
    os._exit(0)
print(f"{os.getpid()},{child}", flush=True)
time.sleep(120)
"""


class OrphanedMemory(E2E):
    """NVML lists a dead pid's memory: the holder of CUDA files NVML does not
    list, and its busy child, are GPU work, not other work, whether status
    shows device holders (--json) or not (the text, which looks at the busy
    processes' families only and scans everyone when one holds such files)."""

    def setUp(self):
        super().setUp()
        self.dev = os.path.join(self.tmp.name, "dev")
        os.mkdir(self.dev)
        for name in ("nvidia0", "nvidiactl", "nvidia-uvm"):
            open(os.path.join(self.dev, name), "w").close()
        holder = subprocess.Popen([sys.executable, "-c", CUDA_HOLDER, self.dev],
                                  stdout=subprocess.PIPE, text=True)
        self.children.append(holder)
        self.holder, self.busy_child = map(int, holder.stdout.readline().split(","))
        other = spawn_python(OTHER)
        self.children.append(other)
        self.other = int(other.stdout.readline())
        self.scenario = one_gpu_process(unused_pid(), self.tmp.name)

    def test_status_json_carries_the_holder_and_never_lists_it_as_other_work(self):
        p = run(["--dev-prefix", self.dev, "status", "--json"], scenario=self.scenario)
        self.assertEqual(p.returncode, 0, p.stderr)
        _, samples = read_trace(p.stdout)
        holders = [h["pid"] for h in samples[0].get("device_holders") or []]
        self.assertIn(self.holder, holders)
        for e in samples[0]["host"].get("other_cpu_top") or []:
            self.assertNotIn(e["pid"], (self.holder, self.busy_child))

    def test_status_text_never_lists_the_holder_or_its_busy_child(self):
        line = ""
        for _ in range(5):
            p = run(["--dev-prefix", self.dev, "status"], scenario=self.scenario)
            self.assertEqual(p.returncode, 0, p.stderr)
            lines = [l for l in p.stdout.splitlines() if "other work (outside the GPU jobs):" in l]
            for pid in (self.holder, self.busy_child):
                self.assertNotIn(f" {pid} ", lines[0] if lines else "", p.stdout)
            if lines and f" {self.other} " in lines[0]:
                line = lines[0]
                break
        self.assertTrue(line, p.stdout)


if __name__ == "__main__":
    unittest.main()
