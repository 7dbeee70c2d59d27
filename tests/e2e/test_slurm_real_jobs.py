"""Slurm jobs through the real slurmd and scontrol (tests/e2e/gd_slurm.py):
sbatch jobs whose processes the fake NVML lists on their GPUs; the epilog
as slurmd's Epilog= ending what a job left behind; ps, who and report
naming the jobs from the real `scontrol show job`. Runs as root."""
import json
import os
import signal
import sys
import time
import unittest

from gd_e2e import E2E, FAKE_NVML, GPUDOCTOR, load_scenario, run, scenario_4gpu
from gd_slurm import SCANCEL, SCONTROL, SlurmCluster, node_reason
from test_serve import Serve
from test_who_kill import GiB, MiB, alive, wait_until

EPILOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy",
                      "slurm", "epilog.sh")

# A job's program. "stay": says its pid and GPUs, then runs on. "leave":
# starts a daemonised child (double fork, its own session: slurmd's
# proctrack/linuxproc no longer sees it as the job's), says both pids and
# the GPUs, waits for the test's go, and ends, leaving the child behind.
JOB = r"""
import os, sys, time
folder, mode = sys.argv[1], sys.argv[2]
job = os.environ["SLURM_JOB_ID"]
gpus = os.environ.get("SLURM_JOB_GPUS", "")
child = 0
if mode == "leave":
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(w, str(os.getpid()).encode())
            time.sleep(150)
            os._exit(0)
        os._exit(0)
    child = int(os.read(r, 32))
tmp = os.path.join(folder, f"job-{job}.tmp")
with open(tmp, "w") as f:
    f.write(f"{os.getpid()} {child} {gpus}\n")
os.rename(tmp, os.path.join(folder, f"job-{job}"))
go = os.path.join(folder, f"go-{job}")
end = time.time() + 150
while time.time() < end and not os.path.exists(go):
    time.sleep(0.05)
"""


def first_job_id():
    """Job ids of this test's cluster alone: the epilog ends every process
    with the job's SLURM_JOB_ID on the machine, and other tests' clusters
    (run at the same time) number their jobs from 1."""
    return 200000 + (os.getpid() % 50000) * 10


class RealSlurmJobs(E2E):
    gpus = 4

    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            self.fail("these tests run slurmd and its jobs as root")
        self.folder = os.path.join(self.tmp.name, "jobs")
        os.mkdir(self.folder)
        self.program = os.path.join(self.tmp.name, "job.py")
        with open(self.program, "w") as f:
            f.write(JOB)
        self.header, samples = load_scenario(scenario_4gpu())
        self.base = samples[0]
        self.scenario_path = os.path.join(self.tmp.name, "scenario.jsonl")
        self.write_scenario({})
        self.slurm = None

    def tearDown(self):
        if self.slurm:
            # The jobs first (their epilogs included), then the daemons.
            for job in getattr(self, "jobs", []):
                self.slurm.run([SCANCEL, job], check=False)
            for job in getattr(self, "jobs", []):
                try:
                    self.slurm.wait_job(job, ("COMPLETED", "CANCELLED", "FAILED"), timeout=60)
                except AssertionError:
                    pass
            self.slurm.stop()
        for pid in getattr(self, "leftovers", []):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        super().tearDown()

    def write_scenario(self, procs, frees=True, driver=300 * MiB):
        """GPU index -> [(pid, bytes)]; written whole, then renamed into
        place, so that a reader never sees half of it."""
        header = dict(self.header)
        if frees:
            header["ended_processes_free_memory"] = True
        s = json.loads(json.dumps(self.base))
        for g in s["gpus"]:
            plist = procs.get(g["index"], [])
            g["processes"] = [{"pid": p, "used_bytes": b, "type": "compute"} for p, b in plist]
            g["mem_used_bytes"] = sum(b for _, b in plist) + driver
        tmp = self.scenario_path + ".tmp"
        with open(tmp, "w") as f:
            f.write(json.dumps(header) + "\n" + json.dumps(s) + "\n")
        os.replace(tmp, self.scenario_path)

    def submit(self, mode, *args):
        job = self.slurm.sbatch("--gres=gpu:1", *args, "--wrap",
                                f"{sys.executable} {self.program} {self.folder} {mode}")
        self.jobs = getattr(self, "jobs", []) + [job]
        return job

    def started(self, job, timeout=60):
        """(pid, child pid or 0, the job's GPU) once the job's program ran."""
        path = os.path.join(self.folder, f"job-{job}")
        if not wait_until(lambda: os.path.exists(path), timeout=timeout):
            self.fail(f"job {job} did not start in {timeout} s: {self.slurm.show_job(job)}\n"
                      + self.slurm.daemon_logs())
        with open(path) as f:
            pid, child, gpus = (int(x) for x in f.read().split())
        # Never 0: kill(0) would end this test's own process group.
        self.leftovers = getattr(self, "leftovers", []) + [p for p in (pid, child) if p > 0]
        return pid, child, gpus

    def go(self, job):
        open(os.path.join(self.folder, f"go-{job}"), "w").close()


class RealEpilog(RealSlurmJobs):
    """deploy/slurm/epilog.sh as the real slurmd's Epilog=, proctrack/linuxproc
    (a daemonised child escapes it, as on many clusters), the build's
    gpudoctor on the fake NVML; its decisions go to a file through
    $GPUDOCTOR_LOGGER."""

    def start_cluster(self):
        t = self.tmp.name
        self.log = os.path.join(t, "epilog.log")
        gd = os.path.join(t, "gpudoctor")
        with open(gd, "w") as f:
            f.write(f"#!/bin/sh\nexec {GPUDOCTOR} --nvml-lib {FAKE_NVML} --kmsg none \"$@\"\n")
        logger = os.path.join(t, "logger")
        with open(logger, "w") as f:
            f.write(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> {self.log}\n")
        os.chmod(gd, 0o755)
        os.chmod(logger, 0o755)
        self.slurm = SlurmCluster(
            gpus=self.gpus, node="gdepilog", epilog=os.path.abspath(EPILOG),
            extra_conf=[f"FirstJobId={first_job_id()}"],
            script_env={"GPUDOCTOR": gd, "GPUDOCTOR_LOGGER": logger, "SCONTROL": SCONTROL,
                        "FAKE_NVML_SCENARIO": self.scenario_path,
                        "GPUDOCTOR_EPILOG_GRACE": "2s",
                        "GPUDOCTOR_EPILOG_MEMORY_TIMEOUT": "3s"})
        self.slurm.__enter__()
        return self.slurm

    def lines(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return f.read().splitlines()

    def wait_log(self, needle, timeout=60):
        if not wait_until(lambda: any(needle in l for l in self.lines()), timeout=timeout):
            self.fail(f"no epilog line with {needle!r} in {timeout} s: {self.lines()}\n"
                      + self.slurm.daemon_logs())
        return [l for l in self.lines() if needle in l][0]

    def two_jobs(self):
        """Job B runs on; job A leaves a daemonised child behind. The fake
        NVML lists A's child and B's process on their GPUs."""
        s = self.start_cluster()
        b = self.submit("stay", "--job-name=other-job")
        b_pid, _, b_gpu = self.started(b)
        a = self.submit("leave", "--job-name=leaker")
        a_pid, child, a_gpu = self.started(a)
        self.assertNotEqual(a_gpu, b_gpu)
        return s, a, child, a_gpu, b, b_pid, b_gpu

    def test_leftover_child_ended_memory_back_other_job_survives(self):
        s, a, child, a_gpu, b, b_pid, b_gpu = self.two_jobs()
        self.write_scenario({a_gpu: [(child, 20 * GiB)], b_gpu: [(b_pid, 10 * GiB)]})
        self.go(a)
        s.wait_job(a, "COMPLETED")
        self.wait_log(f"job={a} gpus={a_gpu} finding=clean action=none")
        lines = self.lines()
        self.assertTrue(any(f"job {a}: ending pid {child}" in l and
                            f"SLURM_JOB_ID={a} in its environment" in l for l in lines), lines)
        self.assertTrue(any(f"job {a}: GPU {a_gpu}: memory back" in l for l in lines), lines)
        self.assertTrue(wait_until(lambda: not alive(child)), f"pid {child} still runs")
        # The other job and its process were not touched; the node is up.
        self.assertTrue(alive(b_pid), f"job {b}'s pid {b_pid} was ended")
        self.assertEqual(s.show_job(b).get("JobState"), "RUNNING")
        fields = s.show_node()
        self.assertNotIn("DRAIN", fields["State"])
        # The node still takes jobs.
        c = s.sbatch("--wrap", "true")
        self.jobs.append(c)
        s.wait_job(c, "COMPLETED")
        for line in lines:
            print(f"epilog log: {line}", file=sys.stderr)

    def test_memory_not_back_drains_with_the_reason(self):
        s, a, child, a_gpu, b, b_pid, b_gpu = self.two_jobs()
        # The driver keeps the memory after the child ends.
        self.write_scenario({a_gpu: [(child, 20 * GiB)], b_gpu: [(b_pid, 10 * GiB)]},
                            frees=False)
        self.go(a)
        fields = s.wait_node(lambda f: "DRAIN" in f.get("State", ""), "drained by the epilog",
                             timeout=120)
        reason = node_reason(fields)
        self.assertEqual(reason, f"gpudoctor: GPU {a_gpu} holds 20.3 GiB after job {a} "
                                 f"ended; pid {child} gone")
        self.wait_log(f"finding=memory-not-back action=drain node={s.node}")
        self.assertFalse(alive(child))
        self.assertTrue(alive(b_pid), f"job {b}'s pid {b_pid} was ended")
        print(f"scontrol show node: State={fields['State']} Reason={fields.get('Reason')}",
              file=sys.stderr)


class RealJobNames(RealSlurmJobs):
    """Jobs under proctrack/cgroup (each in its job_J/step_batch cgroup),
    named by the real scontrol in ps, who, report and serve's /metrics."""

    def test_ps_who_report_name_the_jobs(self):
        s = self.slurm = SlurmCluster(gpus=self.gpus, node="gdnames", proctrack="cgroup",
                                      extra_conf=[f"FirstJobId={first_job_id() + 5}"])
        s.__enter__()
        train = self.submit("stay", "--job-name=train-llm")
        evaluate = self.submit("stay", "--job-name=eval-v2")
        t_pid, _, t_gpu = self.started(train)
        e_pid, _, e_gpu = self.started(evaluate)
        with open(f"/proc/{t_pid}/cgroup") as f:
            cgroup = f.read()
        self.assertIn(f"/job_{train}/step_batch", cgroup)
        self.write_scenario({t_gpu: [(t_pid, 20 * GiB)], e_gpu: [(e_pid, 10 * GiB)]})
        env = {"GPUDOCTOR_SCONTROL": SCONTROL, "SLURM_CONF": s.conf}
        want_t = f"slurm {train} train-llm (root, gpu)"
        want_e = f"slurm {evaluate} eval-v2 (root, gpu)"

        p = run(["ps"], scenario=self.scenario_path, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(want_t, p.stdout)
        self.assertIn(want_e, p.stdout)
        print(p.stdout, file=sys.stderr)
        p = run(["ps", "--json"], scenario=self.scenario_path, env=env)
        rows = {r["pid"]: r for r in json.loads(p.stdout)["processes"]}
        self.assertEqual(rows[t_pid]["slurm_job_id"], train)
        self.assertEqual(rows[t_pid]["slurm_job"], want_t)

        p = run(["who"], scenario=self.scenario_path, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"job: {want_t}", p.stdout)
        self.assertIn(f"job: {want_e}", p.stdout)

        out = os.path.join(self.tmp.name, "t.jsonl")
        p = run(["--interval", "200ms", "record", "-o", out, "--count", "6"],
                scenario=self.scenario_path, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = run(["report", "--from", out, "--by", "job"], scenario=self.scenario_path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(want_t, p.stdout)
        self.assertIn(want_e, p.stdout)
        print(p.stdout, file=sys.stderr)

        # serve: the job on an info series of its own, never a label on the
        # GPU series.
        serve = Serve(self.scenario_path, ["--no-db"], self.tmp, env=env)
        self.addCleanup(serve.kill)
        body = ""
        end = time.time() + 30
        while time.time() < end and 'job_name="eval-v2"' not in body:
            _, _, body = serve.get("/metrics")
            time.sleep(0.1)
        info = [l for l in body.splitlines() if l.startswith("gpudoctor_gpu_job_info{")]
        self.assertTrue(any(f'gpu="{t_gpu}"' in l and f'job_id="{train}"' in l and
                            'job_name="train-llm"' in l and 'user="root"' in l for l in info),
                        info)
        self.assertTrue(any(f'job_id="{evaluate}"' in l and 'job_name="eval-v2"' in l
                            for l in info), info)
        for line in body.splitlines():
            # GPU series (a gpu label): none carries the job. (The per-job
            # counters, gpudoctor_job_*, are the job's own series.)
            if line.startswith("#") or line.startswith("gpudoctor_gpu_job_info{") or \
                    'gpu="' not in line:
                continue
            self.assertNotIn("job_id=", line)
            self.assertNotIn("train-llm", line)


if __name__ == "__main__":
    unittest.main()
