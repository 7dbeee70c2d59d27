"""who, kill and watch-leak, end to end: real child processes play GPU jobs
(trainers with workers, a zombie, a process stuck in D state, a device-file
holder, a process in another PID namespace) and the fake NVML lists their
real pids."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import unittest

from gd_e2e import (E2E, FAKE_NVML, GPUDOCTOR, TRAINER, ZOMBIE_PARENT, load_scenario, read_trace, run,
                    scenario_4gpu, spawn_python, unused_pid, write_scenario)

GiB = 1 << 30
MiB = 1 << 20

# A process that records every catchable signal it receives into a file
# (one name per line) and otherwise sleeps: the "nothing else was signalled"
# witness. Prints its pid.
CANARY = r"""
import os, signal, sys, time
log = sys.argv[1]
def note(sig, frame):
    with open(log, "a") as f:
        f.write(signal.Signals(sig).name + "\n")
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2,
          signal.SIGQUIT):
    signal.signal(s, note)
print(os.getpid(), flush=True)
end = time.time() + 120
while time.time() < end:
    time.sleep(0.1)
"""

# Ignores SIGTERM: only SIGKILL ends it.
TERM_IGNORER = r"""
import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print(os.getpid(), flush=True)
time.sleep(120)
"""

# A DDP launcher: saved as a file named "torchrun" so that its command line
# is "python .../torchrun ..." like the real console script. Starts `ranks`
# ranks (new python processes, as torchrun's are), each with one data-loader
# worker; prints launcher,rank,worker,...
LAUNCHER = r"""
import os, subprocess, sys, time
RANK = '''
import os, sys, time
worker = os.fork()
if worker == 0:
    time.sleep(120)
    os._exit(0)
print(f"{os.getpid()},{worker}", flush=True)
time.sleep(120)
'''
out = [os.getpid()]
ranks = [subprocess.Popen([sys.executable, "-c", RANK, "--local-rank", str(i)],
                          stdout=subprocess.PIPE, text=True) for i in range(int(sys.argv[1]))]
for r in ranks:
    out += [int(x) for x in r.stdout.readline().split(",")]
print(",".join(map(str, out)), flush=True)
time.sleep(120)
"""

# Holds the file `argv[1]` open (a fake /dev/nvidia0 under a temp dev prefix).
DEVICE_HOLDER = r"""
import os, sys, time
f = open(sys.argv[1], "rb")
print(os.getpid(), flush=True)
time.sleep(120)
"""

# vfork(): the parent waits in the kernel (state D, TASK_KILLABLE) until the
# child execs or exits; the child pauses forever. Prints the parent's pid.
VFORK_PARENT = r"""
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
print(os.getpid(), flush=True)
if libc.vfork() == 0:
    libc.pause()
    libc._exit(0)
time.sleep(120)
"""


def spawn(code, *args):
    return subprocess.Popen([sys.executable, "-c", code] + [str(a) for a in args],
                            stdout=subprocess.PIPE, text=True)


def reap_in_background(proc):
    """Waits for `proc` on a thread so that when it dies it does not stay a
    zombie of the test (as it would not on a real host, where its parent
    would be a shell or init)."""
    threading.Thread(target=proc.wait, daemon=True).start()


def kill_pids(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def state_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        # Gone before the open, or between the open and the read (ESRCH).
        return None


def alive(pid):
    return state_of(pid) not in (None, "Z", "X")


def wait_until(cond, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def mentions_pid(text, pid):
    """Whether text names pid as a number of its own: 536 is not in "+11536.2 MiB/min"."""
    return re.search(rf"(?<![\d.]){pid}(?!\d|\.\d)", text) is not None


def children_of(pid):
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/children") as f:
            out += [int(x) for x in f.read().split()]
    return out


class Scenario:
    """The fake's 4-GPU scenario with our processes on its GPUs. `later`
    is a list of (offset_s, {gpu: [(pid, bytes)]}) samples replayed after
    the first, so that a process can 'free' its memory at a known time."""

    def __init__(self, tmpdir):
        self.tmpdir = tmpdir
        self.header, samples = load_scenario(scenario_4gpu())
        self.base = samples[0]

    def _sample(self, t, procs, driver=300 * MiB):
        s = json.loads(json.dumps(self.base))
        s["t"] = t
        for g in s["gpus"]:
            plist = procs.get(g["index"], [])
            g["processes"] = [{"pid": p, "used_bytes": b, "type": "compute"} for p, b in plist]
            g["mem_used_bytes"] = sum(b for _, b in plist) + driver
        return s

    def write(self, procs, later=(), driver=300 * MiB):
        t0 = self.base["t"]
        samples = [self._sample(t0, procs, driver)]
        for offset, p in later:
            samples.append(self._sample(t0 + offset, p, driver))
        return write_scenario(self.header, samples, self.tmpdir)


class Who(E2E):
    def test_every_byte_explained_live_zombie_missing_driver(self):
        trainer = spawn_python(TRAINER.format(workers=2))
        zparent = spawn_python(ZOMBIE_PARENT)
        self.children += [trainer, zparent]
        pids = [int(x) for x in trainer.stdout.readline().split(",")]
        zp, zombie = [int(x) for x in zparent.stdout.readline().split(",")]
        gone = unused_pid()
        path = Scenario(self.tmp.name).write(
            {0: [(pids[0], 30 * GiB), (zombie, 2 * GiB), (gone, GiB)]})

        p = run(["who", "0", "--json"], scenario=path)
        self.assertEqual(p.returncode, 0, p.stderr)
        a = json.loads(p.stdout)["gpus"][0]
        self.assertEqual(a["used_bytes"], 33 * GiB + 300 * MiB)
        status = {x["pid"]: x for x in a["processes"]}
        self.assertEqual(status[pids[0]]["status"], "live")
        self.assertEqual(status[pids[0]]["proc"]["ppid"], os.getpid())
        self.assertEqual(status[zombie]["status"], "zombie")
        self.assertEqual(status[zombie]["parent"]["pid"], zp)
        self.assertIn(f"gpudoctor kill {zp}", status[zombie]["action"])
        self.assertEqual(status[gone]["status"], "missing")
        self.assertEqual(a["missing_bytes"], GiB)
        self.assertEqual(a["driver_reserved_bytes"], 300 * MiB)
        self.assertEqual(a["listed_bytes"] + a["driver_reserved_bytes"] + a["unexplained_bytes"],
                         a["used_bytes"])

        text = run(["who", "0"], scenario=path).stdout
        self.assertIn(f"parent {zp} (", text)
        self.assertIn("nvidia-smi --gpu-reset -i 0", text)
        self.assertIn("300 MiB", text)
        self.assertIn("= used, as NVML reports it", text)

    def test_device_file_holder_that_nvml_does_not_list(self):
        dev = os.path.join(self.tmp.name, "dev")
        os.mkdir(dev)
        for name in ("nvidia0", "nvidia1", "nvidiactl"):
            open(os.path.join(dev, name), "w").close()
        holder = spawn(DEVICE_HOLDER, os.path.join(dev, "nvidia0"))
        other_gpu = spawn(DEVICE_HOLDER, os.path.join(dev, "nvidia1"))
        trainer = spawn_python(TRAINER.format(workers=0))
        self.children += [holder, other_gpu, trainer]
        hpid = int(holder.stdout.readline())
        opid = int(other_gpu.stdout.readline())
        tpid = int(trainer.stdout.readline())
        # NVML lists the trainer only, and 6 GiB more are used than it has.
        path = Scenario(self.tmp.name).write({0: [(tpid, 4 * GiB)]}, driver=6 * GiB)

        p = run(["who", "0", "--json", "--dev-prefix", dev], scenario=path)
        self.assertEqual(p.returncode, 0, p.stderr)
        a = json.loads(p.stdout)["gpus"][0]
        holders = {h["pid"]: h for h in a["other_holders"]}
        self.assertIn(hpid, holders)
        self.assertEqual(holders[hpid]["devices"], ["nvidia0"])
        self.assertTrue(holders[hpid]["this_gpu"])
        self.assertNotIn(opid, holders, "a holder of GPU 1 only is not GPU 0's business")
        self.assertIsNone(a["driver_reserved_bytes"], "6 GiB is not a driver reservation")
        self.assertEqual(a["unexplained_bytes"], 6 * GiB)
        text = run(["who", "0", "--dev-prefix", dev], scenario=path).stdout
        self.assertIn("Other processes with NVIDIA device files open", text)
        self.assertIn(str(hpid), text)
        # Without the prefix override nothing under the temp dir counts.
        a = json.loads(run(["who", "0", "--json"], scenario=path).stdout)["gpus"][0]
        self.assertNotIn(hpid, [h["pid"] for h in a["other_holders"]])

    def test_process_stuck_in_d_state(self):
        parent = spawn(VFORK_PARENT)
        self.children.append(parent)
        ppid = int(parent.stdout.readline())
        if not wait_until(lambda: state_of(ppid) == "D", 3):
            self.skipTest(f"vfork parent is in state {state_of(ppid)}, not D, on this kernel")
        path = Scenario(self.tmp.name).write({2: [(ppid, 3 * GiB)]})
        p = run(["who", "2", "--json"], scenario=path)
        self.assertEqual(p.returncode, 0, p.stderr)
        a = json.loads(p.stdout)["gpus"][0]
        self.assertEqual(a["processes"][0]["status"], "uninterruptible")
        self.assertIn(f"/proc/{ppid}/stack", a["processes"][0]["action"])

    def test_process_in_another_pid_namespace(self):
        if not shutil.which("unshare"):
            self.skipTest("unshare(1) is not installed")
        ns = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", sys.executable,
                               "-c", "import time; print('up', flush=True); time.sleep(120)"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.children.append(ns)
        if ns.stdout.readline().strip() != "up":
            self.skipTest("unshare --pid is not permitted here: " + ns.stderr.read().strip())
        inner = children_of(ns.pid)
        self.assertEqual(len(inner), 1)
        path = Scenario(self.tmp.name).write({1: [(inner[0], 5 * GiB)]})
        a = json.loads(run(["who", "1", "--json"], scenario=path).stdout)["gpus"][0]
        proc = a["processes"][0]["proc"]
        self.assertEqual(proc["nspid"], [inner[0], 1])
        self.assertIn(f"pid 1 inside", run(["who", "1"], scenario=path).stdout)

    def test_inside_a_container_says_how_to_see_host_pids(self):
        if os.geteuid() != 0 or not shutil.which("unshare"):
            self.skipTest("needs root and unshare(1) to run gpudoctor in a new PID namespace")
        trainer = spawn_python(TRAINER.format(workers=0))
        self.children.append(trainer)
        tpid = int(trainer.stdout.readline())
        path = Scenario(self.tmp.name).write({0: [(tpid, 8 * GiB)]})
        env = dict(os.environ, FAKE_NVML_SCENARIO=path)
        p = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", GPUDOCTOR,
                            "--nvml-lib", FAKE_NVML, "--kmsg", "none", "who", "0"],
                           env=env, capture_output=True, text=True, timeout=30)
        if "unshare:" in p.stderr:
            self.skipTest("unshare --pid --mount-proc not permitted: " + p.stderr.strip())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("runs inside a container", p.stdout)
        self.assertIn("--pid=host", p.stdout)
        self.assertIn("hostPID: true", p.stdout)
        self.assertNotIn("orphaned", p.stdout)
        self.assertNotIn("gpu-reset", p.stdout)

    def test_bad_gpu_is_one_line_error(self):
        path = Scenario(self.tmp.name).write({})
        p = run(["who", "9"], scenario=path)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr.strip(), "gpudoctor: who: no GPU 9: this host has 4 GPU(s)")


class KillRefusals(E2E):
    """Each safety rule: nothing is sent (exit 3) and the target lives."""

    def gpu_sleeper(self):
        t = spawn_python(TRAINER.format(workers=0))
        self.children.append(t)
        pid = int(t.stdout.readline())
        return pid, Scenario(self.tmp.name).write({0: [(pid, 10 * GiB)]})

    def test_pid_1(self):
        _, path = self.gpu_sleeper()
        p = run(["kill", "1", "--yes", "--any"], scenario=path)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("PID 1 (init) is never signalled", p.stdout)

    def test_nvml_listing_pid_1_does_not_make_every_process_its_worker(self):
        # A container whose workload is its PID 1, seen from inside: NVML
        # lists PID 1, and every process descends from it.
        path = Scenario(self.tmp.name).write({0: [(1, 10 * GiB)]})
        other = spawn(CANARY, os.path.join(self.tmp.name, "canary.log"))
        self.children.append(other)
        reap_in_background(other)
        opid = int(other.stdout.readline())
        p = run(["kill", str(opid), "--yes"], scenario=path)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("not a GPU process nor a descendant of one (add --any", p.stdout)
        self.assertTrue(alive(opid))
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "canary.log")))

    def test_pids_are_decimal_never_octal_or_hex(self):
        pid, path = self.gpu_sleeper()
        # A leading zero is decimal: the plan names the same process.
        p = run(["kill", "0" + str(pid), "--dry-run"], scenario=path)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"  {pid} ", p.stdout)
        for text in (hex(pid), "+" + str(pid), f" {pid}"):
            p = run(["kill", text, "--yes"], scenario=path)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn(f"'{text}' is not a decimal number", p.stderr)
            self.assertTrue(alive(pid))

    def test_itself_and_its_ancestors(self):
        _, path = self.gpu_sleeper()
        env = dict(os.environ, FAKE_NVML_SCENARIO=path)
        # `exec` makes gpudoctor's pid the shell's $$.
        p = subprocess.run(["sh", "-c", f'exec "$0" --nvml-lib "$1" --kmsg none kill $$ --yes '
                            f'--any', GPUDOCTOR, FAKE_NVML], env=env, capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("that is gpudoctor itself", p.stdout)
        p = run(["kill", str(os.getpid()), "--yes", "--any"], scenario=path)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("an ancestor of gpudoctor", p.stdout)

    def test_not_a_gpu_process_without_any(self):
        _, path = self.gpu_sleeper()
        other = spawn(CANARY, os.path.join(self.tmp.name, "canary.log"))
        self.children.append(other)
        reap_in_background(other)
        opid = int(other.stdout.readline())
        p = run(["kill", str(opid), "--yes"], scenario=path)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("not a GPU process nor a descendant of one (add --any", p.stdout)
        self.assertTrue(alive(opid))
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "canary.log")))
        # With --any it goes, and nothing is said about GPU memory.
        p = run(["kill", str(opid), "--yes", "--any", "--force", "--timeout", "1s"], scenario=path)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("none of them was listed on a GPU", p.stdout)
        self.assertTrue(wait_until(lambda: not alive(opid)))

    def test_another_users_process_when_not_root(self):
        pid, path = self.gpu_sleeper()
        if os.geteuid() == 0:
            setpriv = shutil.which("setpriv")
            if not setpriv:
                self.skipTest("running as root and setpriv(1) is missing: cannot act as another user")
            # Run gpudoctor as nobody against our (root's) process.
            os.chmod(self.tmp.name, 0o755)
            os.chmod(path, 0o644)
            cmd = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", GPUDOCTOR,
                   "--nvml-lib", FAKE_NVML, "--kmsg", "none", "kill", str(pid), "--yes"]
        else:
            owned_by_other = [int(d) for d in os.listdir("/proc") if d.isdigit() and int(d) > 2
                              and os.stat(f"/proc/{d}").st_uid != os.geteuid()]
            if not owned_by_other:
                self.skipTest("no process of another user to aim at")
            pid = owned_by_other[0]
            path = Scenario(self.tmp.name).write({0: [(pid, GiB)]})
            cmd = [GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none", "kill", str(pid), "--yes"]
        p = subprocess.run(cmd, env=dict(os.environ, FAKE_NVML_SCENARIO=path),
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("only root may signal another user's processes", p.stdout)
        self.assertTrue(alive(pid))

    def test_no_terminal_without_yes(self):
        pid, path = self.gpu_sleeper()
        p = run(["kill", str(pid)], scenario=path)  # stdin: not a tty under the test runner
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("stdin is not a terminal and --yes was not given", p.stderr)
        self.assertTrue(alive(pid))

    def test_dry_run_sends_nothing(self):
        pid, path = self.gpu_sleeper()
        p = run(["kill", str(pid), "--dry-run"], scenario=path)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("Dry run: nothing was sent", p.stdout)
        self.assertIn(f"Will send SIGTERM to 1 process(es)", p.stdout)
        self.assertTrue(alive(pid))

    def test_usage_errors(self):
        _, path = self.gpu_sleeper()
        self.assertEqual(run(["kill"], scenario=path).returncode, 2)
        self.assertEqual(run(["kill", "5", "--signal", "NOPE"], scenario=path).returncode, 2)
        p = run(["kill", str(unused_pid()), "--yes"], scenario=path)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no such process", p.stderr)


class Kill(E2E):
    def test_term_then_kill_escalation_and_memory_released(self):
        ignorer = spawn(TERM_IGNORER)
        self.children.append(ignorer)
        reap_in_background(ignorer)
        pid = int(ignorer.stdout.readline())
        # NVML stops listing it 1.5 s after gpudoctor starts (after the
        # SIGKILL that comes at ~1 s).
        path = Scenario(self.tmp.name).write({0: [(pid, 20 * GiB)]}, later=[(1.5, {})])
        p = run(["kill", str(pid), "--yes", "--timeout", "1s"], scenario=path)
        self.assertEqual(p.returncode, 5, p.stdout + p.stderr)
        self.assertIn("ignores or handles SIGTERM", p.stdout)
        self.assertIn("--force", p.stdout)
        self.assertTrue(alive(pid))

        p = run(["kill", str(pid), "--yes", "--timeout", "1s", "--force"], scenario=path)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"sent SIGTERM to {pid}", p.stdout)
        self.assertIn("sending SIGKILL", p.stdout)
        self.assertIn(f"sent SIGKILL to {pid}", p.stdout)
        self.assertIn("GPU memory released", p.stdout)
        self.assertTrue(wait_until(lambda: not alive(pid)))

    def test_memory_not_released_says_why(self):
        trainer = spawn_python(TRAINER.format(workers=0))
        self.children.append(trainer)
        reap_in_background(trainer)
        pid = int(trainer.stdout.readline())
        path = Scenario(self.tmp.name).write({0: [(pid, 12 * GiB)]})  # static: never freed
        p = run(["kill", str(pid), "--yes", "--timeout", "1s"], scenario=path)
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
        self.assertIn("GPU memory NOT released", p.stdout)
        self.assertIn(f"pid {pid} has exited but NVML still lists it on GPU 0", p.stdout)
        self.assertIn("nvidia-smi --gpu-reset -i 0", p.stdout)
        self.assertFalse(alive(pid))

    def test_zombie_left_by_its_parent_names_the_parent(self):
        # The GPU process is a child of a parent that never reaps it.
        parent = spawn_python(r"""
import os, time
pid = os.fork()
if pid == 0:
    time.sleep(120)
    os._exit(0)
print(f"{os.getpid()},{pid}", flush=True)
time.sleep(120)
""")
        self.children.append(parent)
        ppid, child = [int(x) for x in parent.stdout.readline().split(",")]
        path = Scenario(self.tmp.name).write({1: [(child, 6 * GiB)]})
        p = run(["kill", str(child), "--yes", "--timeout", "1s"], scenario=path)
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
        self.assertEqual(state_of(child), "Z")
        self.assertIn(f"parent {ppid}", p.stdout)
        self.assertIn(f"gpudoctor kill {ppid}", p.stdout)
        self.assertTrue(alive(ppid), "the parent was not selected")
        # The advice is accepted: the parent of a zombie GPU process may go.
        p = run(["kill", str(ppid), "--dry-run"], scenario=path)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"parent of unreaped zombie {child}", p.stdout)

    def test_tree_kills_launcher_ranks_and_workers_and_nothing_else(self):
        script = os.path.join(self.tmp.name, "torchrun")
        with open(script, "w") as f:
            f.write(LAUNCHER)
        launcher = subprocess.Popen([sys.executable, script, "2"], stdout=subprocess.PIPE,
                                    text=True)
        self.children.append(launcher)
        reap_in_background(launcher)
        launcher_pid, r0, w0, r1, w1 = [int(x) for x in launcher.stdout.readline().split(",")]
        self.addCleanup(kill_pids, [r0, w0, r1, w1])  # if the test fails before kill
        log = os.path.join(self.tmp.name, "canary.log")
        # Another job on the same GPU, with its worker, and an unrelated process.
        other = spawn_python(TRAINER.format(workers=1))
        canary = spawn(CANARY, log)
        self.children += [other, canary]
        opids = [int(x) for x in other.stdout.readline().split(",")]
        cpid = int(canary.stdout.readline())
        path = Scenario(self.tmp.name).write(
            {0: [(r0, 20 * GiB), (opids[0], 5 * GiB)], 1: [(r1, 20 * GiB)]},
            later=[(2.0, {0: [(opids[0], 5 * GiB)]})])

        p = run(["kill", str(w0), "--tree", "--yes", "--timeout", "3s"], scenario=path)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"launcher of {w0}", p.stdout)
        for pid in (launcher_pid, r0, w0, r1, w1):
            self.assertIn(f"sent SIGTERM to {pid}\n", p.stdout)
            self.assertTrue(wait_until(lambda: not alive(pid)), f"{pid} survived")
        for pid in opids + [cpid]:
            self.assertNotIn(f"to {pid}\n", p.stdout)
            self.assertTrue(alive(pid), f"{pid} was not selected but died")
        self.assertFalse(os.path.exists(log), "the canary received a signal")

    def test_only_the_selected_processes_ever_receive_a_signal(self):
        """Property: over several selections, every process outside the
        selected set survives and its signal log stays empty."""
        logs = {}
        canaries = {}
        for name in ("a", "b", "c", "d"):
            logs[name] = os.path.join(self.tmp.name, f"{name}.log")
            c = spawn(CANARY, logs[name])
            self.children.append(c)
            reap_in_background(c)
            canaries[name] = int(c.stdout.readline())
        # a, b on GPU 0; c on GPU 1; d is no GPU process.
        path = Scenario(self.tmp.name).write(
            {0: [(canaries["a"], GiB), (canaries["b"], GiB)], 1: [(canaries["c"], GiB)]})
        cases = [
            (["kill", str(canaries["a"]), "--signal", "USR1"], {"a"}),
            (["kill", "--gpu", "1", "--signal", "USR2"], {"c"}),
            (["kill", "--gpu", "0", "--signal", "HUP", "--user", "nosuchuser"], set()),
            (["kill", "--gpu", "0", "--signal", "USR1"], {"a", "b"}),
            (["kill", str(canaries["d"]), "--signal", "USR1"], set()),  # refused: no --any
        ]
        expected = {n: [] for n in logs}
        for args, selected in cases:
            p = run(args + ["--yes", "--timeout", "300ms"], scenario=path)
            sig = args[args.index("--signal") + 1]
            for n in selected:
                expected[n].append("SIG" + sig)
            for n in logs:
                want = expected[n]
                self.assertTrue(wait_until(lambda: self._log(logs[n]) == want, 3),
                                f"{args}: {n} got {self._log(logs[n])}, want {want}\n{p.stdout}")
                self.assertTrue(alive(canaries[n]), f"{args}: {n} died")

    @staticmethod
    def _log(path):
        try:
            with open(path) as f:
                return f.read().split()
        except FileNotFoundError:
            return []


class WatchLeak(E2E):
    def leaky_scenario(self, pid, steady):
        # pid grows 100 MiB every 0.5 s (12000 MiB/min); `steady` stays.
        later = [(0.5 * i, {0: [(pid, 4 * GiB + i * 100 * MiB), (steady, 2 * GiB)]})
                 for i in range(1, 13)]
        return Scenario(self.tmp.name).write({0: [(pid, 4 * GiB), (steady, 2 * GiB)]},
                                             later=later)

    def two_sleepers(self):
        a = spawn_python(TRAINER.format(workers=0))
        b = spawn_python(TRAINER.format(workers=0))
        self.children += [a, b]
        return int(a.stdout.readline()), int(b.stdout.readline())

    def test_growth_rate_and_time_to_full(self):
        leaky, steady = self.two_sleepers()
        path = self.leaky_scenario(leaky, steady)
        p = run(["--interval", "250ms", "watch-leak", "--duration", "4s", "--json"],
                scenario=path)
        # A growing process is in the exit status (3), as a finding is in
        # diagnose's.
        self.assertEqual(p.returncode, 3, p.stderr)
        got = {e["pid"]: e for e in json.loads(p.stdout)["processes"]}
        self.assertAlmostEqual(got[leaky]["slope_mib_per_min"], 12000, delta=2000)
        self.assertTrue(got[leaky]["leaking"])
        free = got[leaky]["gpu_free_bytes"]
        self.assertGreater(free, 0)
        self.assertAlmostEqual(got[leaky]["time_to_full_s"],
                               free / (got[leaky]["slope_mib_per_min"] * MiB / 60), delta=1)
        self.assertAlmostEqual(got[steady]["slope_mib_per_min"], 0, delta=1)
        self.assertFalse(got[steady]["leaking"])

    def test_one_pid_and_ctrl_c_prints_the_summary(self):
        leaky, steady = self.two_sleepers()
        path = self.leaky_scenario(leaky, steady)
        env = dict(os.environ, FAKE_NVML_SCENARIO=path)
        p = subprocess.Popen([GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none", "--interval",
                              "200ms", "watch-leak", str(leaky), "--duration", "1h"],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(2.5)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=10)
        self.assertEqual(p.returncode, 3, err)
        self.assertIn("GROWING: possible leak", out)
        self.assertTrue(mentions_pid(out, leaky), out)
        self.assertFalse(mentions_pid(out, steady), out)
        self.assertIn("MiB/min", out)

    def test_pid_that_is_not_a_gpu_process(self):
        leaky, steady = self.two_sleepers()
        path = self.leaky_scenario(leaky, steady)
        p = run(["--interval", "200ms", "watch-leak", str(os.getpid()), "--duration", "600ms"],
                scenario=path)
        self.assertEqual(p.returncode, 1)
        self.assertIn("NVML never listed it", p.stderr)


if __name__ == "__main__":
    unittest.main()


# A CUDA process that forks a child and exits, as a DataLoader worker or a
# shell spawned from a notebook outlives its parent: the child inherited
# nvidiactl, nvidia0 and nvidia-uvm (under a temp dev prefix) and sleeps,
# re-parented. Prints "parent,child".
FORKING_OWNER = r"""
import os, sys, time
dev = sys.argv[1]
files = [open(os.path.join(dev, n), "rb") for n in ("nvidiactl", "nvidia0", "nvidia-uvm")]
child = os.fork()
if child == 0:
    os.close(1)
    time.sleep(120)
    os._exit(0)
print(f"{os.getpid()},{child}", flush=True)
"""

# A monitoring agent that only uses NVML. On a real driver (580, H200)
# libnvidia-ml loads libcuda, and the agent holds nvidiactl, the GPU node
# and nvidia-uvm just as a CUDA program does; what tells it apart is that it
# maps no CUDA library but the driver's libcuda (here the fake one, argv[2]).
# Prints its pid.
NVML_ONLY_AGENT = r"""
import mmap, os, sys, time
dev = sys.argv[1]
files = [open(os.path.join(dev, n), "rb") for n in ("nvidiactl", "nvidia0", "nvidia-uvm")]
# Mapped as a file (as the loader maps it), so that a sanitizer build of the
# fake library need not be loadable into this interpreter.
lib = open(sys.argv[2], "rb")
mapped = mmap.mmap(lib.fileno(), 0, prot=mmap.PROT_READ)
print(os.getpid(), flush=True)
time.sleep(120)
"""


class OrphanHolder(E2E):
    """NVML lists a dead pid with 6 GiB on GPU 0; its forked child still
    holds the device files. who names the child, kill plans and ends it."""

    def setUp(self):
        super().setUp()
        self.dev = os.path.join(self.tmp.name, "dev")
        os.mkdir(self.dev)
        for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm"):
            open(os.path.join(self.dev, name), "w").close()
        owner = spawn(FORKING_OWNER, self.dev)
        self.owner, self.child = [int(x) for x in owner.stdout.readline().split(",")]
        owner.wait()  # the owner is gone: only its pid stays in NVML's list
        self.agent_proc = spawn(NVML_ONLY_AGENT, self.dev, os.environ["FAKE_CUDA_LIB"])
        self.agent = int(self.agent_proc.stdout.readline())
        self.bystander_proc = spawn(TERM_IGNORER)
        self.bystander = int(self.bystander_proc.stdout.readline())
        self.children += [self.agent_proc, self.bystander_proc]

    def tearDown(self):
        kill_pids([self.child])
        super().tearDown()

    def scenario(self, later=()):
        return Scenario(self.tmp.name).write({0: [(self.owner, 6 * GiB)]}, later=later)

    def test_who_names_the_child_and_advises_ending_it_not_a_reset(self):
        self.assertFalse(os.path.exists(f"/proc/{self.owner}"))
        path = self.scenario()
        p = run(["who", "0", "--json", "--dev-prefix", self.dev], scenario=path)
        self.assertEqual(p.returncode, 0, p.stderr)
        a = json.loads(p.stdout)["gpus"][0]
        self.assertEqual(a["probable_holders"], [self.child])
        holders = {h["pid"]: h for h in a["other_holders"]}
        self.assertTrue(holders[self.child]["probable"])
        self.assertEqual(holders[self.child]["devices"], ["nvidia-uvm", "nvidia0", "nvidiactl"])
        self.assertFalse(holders[self.agent]["probable"], "an NVML-only client is never proposed")
        self.assertNotIn(self.bystander, holders)
        advice = "\n".join(a["advice"])
        self.assertIn(f"`gpudoctor kill {self.child}`", advice)
        self.assertNotIn("--gpu-reset", advice)

        text = run(["who", "0", "--dev-prefix", self.dev], scenario=path).stdout
        self.assertIn("Probable holder of the memory no live process accounts for", text)
        self.assertIn("re-parented", text)
        self.assertIn(f"gpudoctor kill {self.child}", text)

    def test_kill_gpu_plans_the_holder_and_not_the_agent_or_a_bystander(self):
        path = self.scenario()
        p = run(["kill", "--gpu", "0", "--dry-run", "--dev-prefix", self.dev], scenario=path)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("holds orphaned memory on GPU 0", p.stdout)
        self.assertTrue(mentions_pid(p.stdout, self.child), p.stdout)
        self.assertFalse(mentions_pid(p.stdout, self.agent), p.stdout)
        self.assertFalse(mentions_pid(p.stdout, self.bystander), p.stdout)
        self.assertTrue(alive(self.child))

    def test_kill_holder_ends_it_and_checks_the_memory_came_back(self):
        # NVML stops listing the dead owner once the holder is gone.
        path = self.scenario(later=[(1.5, {})])
        p = run(["kill", str(self.child), "--yes", "--timeout", "5s", "--dev-prefix", self.dev],
                scenario=path)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"sent SIGTERM to {self.child}", p.stdout)
        self.assertIn("GPU memory released", p.stdout)
        self.assertTrue(wait_until(lambda: not alive(self.child)))

    def test_kill_holder_whose_memory_stays_is_not_released(self):
        path = self.scenario()  # NVML lists the dead owner forever
        p = run(["kill", str(self.child), "--yes", "--timeout", "1s", "--dev-prefix", self.dev],
                scenario=path)
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
        self.assertIn("GPU memory NOT released", p.stdout)

    def test_record_keeps_the_holders_and_diagnose_from_names_the_child(self):
        path = self.scenario()
        trace = os.path.join(self.tmp.name, "orphan.jsonl")
        p = run(["--interval", "200ms", "record", "-o", trace, "--count", "5",
                 "--dev-prefix", self.dev], scenario=path)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(trace) as f:
            _, samples = read_trace(f.read())
        held = {h["pid"]: h["devices"] for h in samples[0]["device_holders"]}
        self.assertEqual(held[self.child], ["nvidia-uvm", "nvidia0", "nvidiactl"])
        self.assertEqual(held[self.agent], ["nvidia-uvm", "nvidia0", "nvidiactl"])
        # The child's own entry is in the trace, so a reader can name it.
        procs = {x["pid"]: x for x in samples[0]["processes"]}
        self.assertTrue(procs[self.child]["name"].startswith("python"), procs[self.child])
        self.assertNotEqual(procs[self.child]["ppid"], self.owner, "re-parented")
        for s in samples:
            self.assertIn("device_holders", s)

        p = run(["diagnose", "--from", trace, "--json"])
        findings = {f["id"]: f for f in json.loads(p.stdout)["findings"]}
        self.assertIn("orphaned-memory", findings, p.stdout)
        f = findings["orphaned-memory"]
        self.assertIn(self.child, f["pids"])
        self.assertNotIn(self.agent, f["pids"])
        self.assertIn(f"`gpudoctor kill {self.child}`", f["action"])
        self.assertNotIn("--gpu-reset", f["action"])

    def test_ps_names_the_holder(self):
        path = self.scenario()
        p = run(["ps", "--json", "--dev-prefix", self.dev], scenario=path)
        self.assertEqual(p.returncode, 0, p.stderr)
        held = json.loads(p.stdout)["orphan_holders"]
        self.assertEqual([(h["gpu"], h["pid"]) for h in held], [(0, self.child)])
        self.assertEqual(held[0]["action"], f"gpudoctor kill {self.child}")
        text = run(["ps", "--dev-prefix", self.dev], scenario=path).stdout
        self.assertIn(f"gpudoctor kill {self.child}", text)
        self.assertNotIn(f"gpudoctor kill {self.agent}", text)
