"""Slurm jobs by their names, end to end: real child processes placed in
Slurm jobs the way Slurm places them (SLURM_JOB_ID in the environment, a
cgroup v2 job_J/step_S folder under the real cgroup2 mount, a cgroup v1
/slurm/uid_U/job_J/step_S folder under a real v1 hierarchy), a fake
scontrol on GPUDOCTOR_SCONTROL, the fake NVML for the GPUs; and the epilog
ending what a job left behind. Runs as root (cgroups, other jobs'
environments): a missing prerequisite fails."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import unittest

from gd_e2e import E2E, FAKE_NVML, GPUDOCTOR, TRAINER, run, spawn_python
from test_serve import Serve
from test_who_kill import GiB, MiB, Scenario, alive, reap_in_background, wait_until

# The fake scontrol: `scontrol show job -o ID` as Slurm 22.05 prints it.
FAKE_SCONTROL = r"""#!/bin/sh
[ "$1 $2 $3" = "show job -o" ] || exit 2
line() {
  echo "JobId=$1 JobName=$2 UserId=$3(1000) GroupId=$3(1000) MCS_label=N/A Priority=1 Nice=0 Account=(null) QOS=(null) JobState=RUNNING Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:05 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2020-01-01T00:00:00 EligibleTime=2020-01-01T00:00:00 AccrueTime=Unknown StartTime=2020-01-01T00:00:01 EndTime=Unknown Deadline=N/A Partition=$4 AllocNode:Sid=node1:1 NodeList=node1 Command=/bin/true WorkDir=/tmp"
}
case "$4" in
  1234) line 1234 train-llm alice gpu-a ;;
  4321) line 4321 eval-v2 bob gpu-b ;;
  5555) line 5555 legacy carol gpu-c ;;
  *) echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1 ;;
esac
"""

SLOW_SCONTROL = "#!/bin/sh\nsleep 600\n"
GARBAGE_SCONTROL = "#!/bin/sh\nyes 'JobId=1234 JobName=x UserId=' | head -c 20000000\n"

# A process that waits, then moves itself into the cgroup folder named on
# its command line (writing its pid into cgroup.procs), then says its pid.
IN_CGROUP = r"""
import os, sys, time
with open(os.path.join(sys.argv[1], "cgroup.procs"), "w") as f:
    f.write(str(os.getpid()))
print(os.getpid(), flush=True)
time.sleep(120)
"""


def cgroup2_mount():
    for line in open("/proc/mounts"):
        dev, path, fstype = line.split()[:3]
        if fstype == "cgroup2":
            return path
    raise AssertionError("no cgroup2 mount in /proc/mounts")


def cgroup1_mount(controller):
    for line in open("/proc/mounts"):
        dev, path, fstype, opts = line.split()[:4]
        if fstype == "cgroup" and controller in opts.split(","):
            return path
    raise AssertionError(f"no cgroup v1 {controller} hierarchy in /proc/mounts")


class SlurmCase(E2E):
    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            self.fail("these tests place processes in cgroups: run them as root")
        self.cgroup_dirs = []

    def tearDown(self):
        super().tearDown()
        for d in reversed(self.cgroup_dirs):
            # The processes were killed by E2E's tearDown; their folders
            # empty out once they are reaped.
            wait_until(lambda: not os.path.exists(d) or _rmdir(d), timeout=5)

    def scontrol(self, body):
        path = os.path.join(self.tmp.name, "scontrol-" + str(len(os.listdir(self.tmp.name))))
        with open(path, "w") as f:
            f.write(body)
        os.chmod(path, 0o755)
        return path

    def make_cgroup(self, root, *parts):
        path = root
        for p in parts:
            path = os.path.join(path, p)
            if not os.path.isdir(path):
                os.mkdir(path)
                self.cgroup_dirs.append(path)
        return path

    def start(self, code, *args, env=None):
        e = dict(os.environ)
        e.pop("SLURM_JOB_ID", None)
        if env:
            e.update(env)
        p = subprocess.Popen([sys.executable, "-c", code] + list(args), env=e,
                             stdout=subprocess.PIPE, text=True)
        self.children.append(p)
        reap_in_background(p)
        return p, int(p.stdout.readline().split(",")[0])


def _rmdir(d):
    try:
        os.rmdir(d)
        return True
    except OSError:
        return False


class JobNames(SlurmCase):
    def place_jobs(self):
        """GPU 0: job 1234 (environment); GPU 1: job 4321 (cgroup v2);
        GPU 2: job 5555 (cgroup v1); GPU 3: no job (a plain command)."""
        tag = f"gdtest{os.getpid()}"
        _, p1234 = self.start(TRAINER.format(workers=1), env={"SLURM_JOB_ID": "1234"})
        v2 = self.make_cgroup(cgroup2_mount(), tag, "slurmstepd.scope", "job_4321", "step_0")
        _, p4321 = self.start(IN_CGROUP, v2)
        v1 = self.make_cgroup(cgroup1_mount("freezer"), tag, "uid_1000", "job_5555", "step_0")
        _, p5555 = self.start(IN_CGROUP, v1)
        _, plain = self.start(TRAINER.format(workers=0))
        self.pids = {"1234": p1234, "4321": p4321, "5555": p5555, "plain": plain}
        return Scenario(self.tmp.name).write(
            {0: [(p1234, 20 * GiB)], 1: [(p4321, 10 * GiB)], 2: [(p5555, 5 * GiB)],
             3: [(plain, 2 * GiB)]})

    def test_ps_who_show_slurm_jobs_by_name(self):
        path = self.place_jobs()
        env = {"GPUDOCTOR_SCONTROL": self.scontrol(FAKE_SCONTROL)}
        p = run(["ps"], scenario=path, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("JOB", p.stdout.splitlines()[0])
        self.assertIn("slurm 1234 train-llm (alice, gpu-a)", p.stdout)
        self.assertIn("slurm 4321 eval-v2 (bob, gpu-b)", p.stdout)
        self.assertIn("slurm 5555 legacy (carol, gpu-c)", p.stdout)

        p = run(["ps", "--json"], scenario=path, env=env)
        rows = {r["pid"]: r for r in json.loads(p.stdout)["processes"]}
        self.assertEqual(rows[self.pids["1234"]]["slurm_job_id"], "1234")
        self.assertEqual(rows[self.pids["4321"]]["slurm_job_id"], "4321")
        self.assertEqual(rows[self.pids["5555"]]["slurm_job"], "slurm 5555 legacy (carol, gpu-c)")
        self.assertIsNone(rows[self.pids["plain"]]["slurm_job_id"])

        p = run(["who"], scenario=path, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("job: slurm 1234 train-llm (alice, gpu-a)", p.stdout)
        self.assertIn("job: slurm 4321 eval-v2 (bob, gpu-b)", p.stdout)

    def test_report_by_job_and_trace_field(self):
        path = self.place_jobs()
        env = {"GPUDOCTOR_SCONTROL": self.scontrol(FAKE_SCONTROL)}
        out = os.path.join(self.tmp.name, "t.jsonl")
        p = run(["--interval", "200ms", "record", "-o", out, "--count", "8"], scenario=path,
                env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        samples = [json.loads(l) for l in open(out)][1:]
        procs = {q["pid"]: q for q in samples[-1]["processes"]}
        self.assertEqual(procs[self.pids["1234"]]["slurm_job_id"], "1234")
        self.assertEqual(procs[self.pids["4321"]]["slurm_job_id"], "4321")
        self.assertNotIn("slurm_job_id", procs[self.pids["plain"]])
        # The names arrive from the cache while recording.
        names = {j["id"]: j for s in samples for j in s.get("slurm_jobs", [])}
        self.assertEqual(names["1234"]["name"], "train-llm")

        p = run(["report", "--from", out, "--by", "job"], scenario=path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("slurm 1234 train-llm (alice, gpu-a)", p.stdout)
        self.assertIn("slurm 4321 eval-v2 (bob, gpu-b)", p.stdout)
        self.assertIn("slurm 5555 legacy (carol, gpu-c)", p.stdout)
        # Not Slurm's: its launcher's command, never only "python3 (pid N)".
        m = re.search(r"^(\S[^\n]*?) \(pid \d+\)", p.stdout, re.M)
        self.assertTrue(m and len(m.group(1)) > len("python3"), p.stdout)
        self.assertNotRegex(p.stdout, r"(^|\s)python3? \(pid \d+\)")

    def test_metrics_job_info_series_and_no_job_label_elsewhere(self):
        path = self.place_jobs()
        env = dict(os.environ, GPUDOCTOR_SCONTROL=self.scontrol(FAKE_SCONTROL))
        old = os.environ.get("GPUDOCTOR_SCONTROL")
        os.environ["GPUDOCTOR_SCONTROL"] = env["GPUDOCTOR_SCONTROL"]
        try:
            s = Serve(path, ["--no-db"], self.tmp)
        finally:
            if old is None:
                del os.environ["GPUDOCTOR_SCONTROL"]
            else:
                os.environ["GPUDOCTOR_SCONTROL"] = old
        self.addCleanup(s.kill)
        end = time.time() + 20
        body = ""
        while time.time() < end:
            _, _, body = s.get("/metrics")
            if 'job_name="train-llm"' in body and 'job_name="eval-v2"' in body:
                break
            time.sleep(0.1)
        info = [l for l in body.splitlines() if l.startswith("gpudoctor_gpu_job_info{")]
        self.assertTrue(any('gpu="0"' in l and 'job_id="1234"' in l and
                            'job_name="train-llm"' in l and 'user="alice"' in l
                            for l in info), body)
        self.assertTrue(any('gpu="1"' in l and 'job_id="4321"' in l for l in info), info)
        self.assertEqual(len(info), 3, info)  # GPU 3's process has no job
        for line in body.splitlines():
            # GPU series (a gpu label): none carries the job.
            if line.startswith("#") or line.startswith("gpudoctor_gpu_job_info{") or \
                    'gpu="' not in line:
                continue
            self.assertNotIn("job_id=", line)
            self.assertNotIn("train-llm", line)
        # The API's processes carry the job.
        _, doc = s.get_json("/api/v1/processes")
        rows = {r["pid"]: r for r in doc["processes"]}
        self.assertEqual(rows[self.pids["1234"]]["slurm_job"]["name"], "train-llm")

    def test_slow_or_broken_scontrol_leaves_names_unknown(self):
        path = self.place_jobs()
        for body in (SLOW_SCONTROL, GARBAGE_SCONTROL):
            env = {"GPUDOCTOR_SCONTROL": self.scontrol(body)}
            p = run(["ps"], scenario=path, env=env, timeout=20)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertRegex(p.stdout, r"slurm 1234 +")
            self.assertNotIn("train-llm", p.stdout)
        p = run(["ps"], scenario=path, env={"GPUDOCTOR_SCONTROL": "/nonexistent/scontrol"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("slurm 1234", p.stdout)


# A job's process that leaves a daemonised child (double fork, own
# session) behind; prints the child's pid.
DAEMONISING_JOB = r"""
import os, sys, time
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(w, str(os.getpid()).encode())
        time.sleep(120)
        os._exit(0)
    os._exit(0)
print(os.read(r, 32).decode(), flush=True)
time.sleep(120)
"""


# Job ids no other test's real Slurm hands out (its ids start at 1): the
# epilog ends every process of the job it is given, on the whole machine.
J77, J78 = "770077", "780078"
# The script's tests, which may run at the same time as Epilog's: ids of
# their own.
S77, S78 = "770177", "780178"


class Epilog(SlurmCase):
    def jobs(self):
        _, child77 = self.start(DAEMONISING_JOB, env={"SLURM_JOB_ID": J77})
        _, p78 = self.start(TRAINER.format(workers=0), env={"SLURM_JOB_ID": J78})
        self.addCleanup(lambda: [_kill(p) for p in (child77, p78)])
        return child77, p78

    def test_leftover_child_ended_memory_back_other_job_survives(self):
        child77, p78 = self.jobs()
        # NVML frees GPU 0's memory 3 s in (after the child is ended).
        path = Scenario(self.tmp.name).write(
            {0: [(child77, 20 * GiB)], 1: [(p78, 10 * GiB)]},
            later=[(3.0, {1: [(p78, 10 * GiB)]})])
        env = {"SLURM_JOB_ID": J77, "GPUDOCTOR_SCONTROL": "/nonexistent/scontrol"}
        p = run(["epilog", "--job", J77, "--gpus", "0", "--grace", "1s",
                 "--memory-timeout", "20s"], scenario=path, env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"job {J77}: ending pid {child77}", p.stdout)
        self.assertIn(f"SLURM_JOB_ID={J77} in its environment", p.stdout)
        self.assertIn(f"job {J77}: GPU 0: memory back", p.stdout)
        self.assertTrue(wait_until(lambda: not alive(child77)))
        self.assertTrue(alive(p78), "job 78's process was touched")

        p = run(["epilog", "--job", J77, "--gpus", "0", "--json", "--memory-timeout", "0"],
                scenario=path, env=env)
        doc = json.loads(p.stdout)
        self.assertEqual(doc["ended"], [])
        self.assertTrue(alive(p78))

    def test_memory_not_back_exit_2_with_the_reason(self):
        child77, p78 = self.jobs()
        path = Scenario(self.tmp.name).write({0: [(child77, 41 * GiB)]})  # never freed
        env = {"GPUDOCTOR_SCONTROL": "/nonexistent/scontrol"}
        p = run(["epilog", "--job", J77, "--gpus", "0", "--grace", "1s",
                 "--memory-timeout", "1s", "--reason"], scenario=path, env=env)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(p.stdout, f"gpudoctor: GPU 0 holds 41.3 GiB after job {J77} ended; "
                                   f"pid {child77} gone\n")
        self.assertTrue(alive(p78))

    def test_usage_errors_exit_64(self):
        for args in (["epilog"], ["epilog", "--job", "12x"], ["epilog", "--job", "1", "--grace", "x"],
                     ["epilog", "--job", "1", "--gpus", "99"]):
            p = run(args, scenario=Scenario(self.tmp.name).write({}))
            self.assertEqual(p.returncode, 64, (args, p.stdout, p.stderr))


class EpilogScript(SlurmCase):
    """deploy/slurm/epilog.sh as slurmd runs it: Slurm's environment, a
    fake `logger` and `scontrol` on PATH recording what they were given."""

    SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy",
                          "slurm", "epilog.sh")

    def run_script(self, scenario, job):
        bin_dir = os.path.join(self.tmp.name, "bin")
        os.makedirs(bin_dir, exist_ok=True)
        log = os.path.join(self.tmp.name, "log")
        for name in ("logger", "scontrol"):
            with open(os.path.join(bin_dir, name), "w") as f:
                f.write(f"#!/bin/sh\nprintf '{name}' >> {log}\n"
                        f"for a in \"$@\"; do printf ' [%s]' \"$a\" >> {log}; done\n"
                        f"echo >> {log}\n")
            os.chmod(os.path.join(bin_dir, name), 0o755)
        wrapper = os.path.join(bin_dir, "gd-wrapper")
        with open(wrapper, "w") as f:
            f.write(f"#!/bin/sh\nexec {GPUDOCTOR} --nvml-lib {FAKE_NVML} --kmsg none \"$@\"\n")
        os.chmod(wrapper, 0o755)
        env = dict(os.environ, PATH=bin_dir + ":" + os.environ["PATH"], SLURM_JOB_ID=job,
                   SLURM_JOB_GPUS="0", SLURMD_NODENAME="node7", GPUDOCTOR=wrapper,
                   FAKE_NVML_SCENARIO=scenario, GPUDOCTOR_EPILOG_GRACE="1s",
                   GPUDOCTOR_EPILOG_MEMORY_TIMEOUT="1s",
                   GPUDOCTOR_SCONTROL="/nonexistent/scontrol")
        p = subprocess.run(["sh", self.SCRIPT], env=env, capture_output=True, text=True,
                           timeout=60)
        lines = open(log).read().splitlines() if os.path.exists(log) else []
        return p, lines

    def test_memory_not_back_drains_with_the_reason_and_logs_each_decision(self):
        _, child = self.start(DAEMONISING_JOB, env={"SLURM_JOB_ID": S77})
        self.addCleanup(_kill, child)
        path = Scenario(self.tmp.name).write({0: [(child, 41 * GiB)]})
        p, lines = self.run_script(path, S77)
        self.assertEqual(p.returncode, 1, (p.stdout, p.stderr, lines))
        reason = f"gpudoctor: GPU 0 holds 41.3 GiB after job {S77} ended; pid {child} gone"
        self.assertIn(f"scontrol [update] [nodename=node7] [state=drain] [reason={reason}]",
                      lines)
        logged = [l for l in lines if l.startswith("logger [-t] [gpudoctor-epilog] [--]")]
        self.assertTrue(any(f"ending pid {child}" in l for l in logged), lines)
        self.assertTrue(any("action=drain node=node7" in l for l in logged), lines)
        self.assertFalse(alive(child))

    def test_clean_job_logs_and_does_not_drain(self):
        path = Scenario(self.tmp.name).write({})
        p, lines = self.run_script(path, S78)
        self.assertEqual(p.returncode, 0, (p.stdout, p.stderr, lines))
        self.assertFalse(any(l.startswith("scontrol") for l in lines), lines)
        self.assertTrue(any("finding=clean action=none" in l for l in lines), lines)


def _kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


if __name__ == "__main__":
    unittest.main()
