"""Shared helpers for gpudoctor's end-to-end tests.

The tests start the real binary, point it at the fake libnvidia-ml.so.1
(tests/fake_nvml) through --nvml-lib, and play GPU jobs with real child
processes whose PIDs are written into the fake's scenario.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

GPUDOCTOR = os.environ.get("GPUDOCTOR", "gpudoctor")
FAKE_NVML = os.environ.get("FAKE_NVML_LIB", "")
DATA_DIR = os.environ.get("GD_TEST_DATA", os.path.join(os.path.dirname(__file__), "..", "data"))
NO_DRIVER = "/nonexistent/libnvidia-ml.so.1"
# RSS bounds are asserted as measured on a normal build. Under ASan+UBSan
# (GD_SANITIZED) the same run holds ~3-4x more (shadow memory, the freed-memory
# quarantine), so bounds are multiplied by this factor: still far below the
# 1.3 GB that unbounded growth reached.
RSS_LIMIT_FACTOR = 6 if os.environ.get("GD_SANITIZED") else 1
# ASan keeps freed memory in a quarantine of its own (256 MiB by default on
# 64-bit): a fixed amount on top of the scaled budget, reached by a process
# that allocates and frees a lot (serve parsing 12 MiB of command lines a
# sample), not a multiple of its own use.
RSS_SANITIZER_QUARANTINE = (256 << 20) if os.environ.get("GD_SANITIZED") else 0


def run(args, scenario=None, env=None, timeout=30, nvml=None, check=False):
    """Runs gpudoctor with the fake (or `nvml`) and returns CompletedProcess."""
    e = dict(os.environ)
    # status and ps fit $COLUMNS: a test's output must not depend on the
    # terminal it was started from (a test sets it when it means to).
    e.pop("COLUMNS", None)
    if scenario is not None:
        e["FAKE_NVML_SCENARIO"] = scenario
    if env:
        e.update(env)
    lib = nvml if nvml is not None else FAKE_NVML
    cmd = [GPUDOCTOR, "--nvml-lib", lib, "--kmsg", "none"] + list(args)
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"{cmd} exited {p.returncode}: {p.stderr}")
    return p


def read_trace(text):
    lines = [json.loads(l) for l in text.splitlines() if l.strip()]
    return lines[0], lines[1:]


def strip_nulls(x):
    """A trace value without its null fields (unknown = absent)."""
    if isinstance(x, dict):
        return {k: strip_nulls(v) for k, v in x.items() if v is not None}
    if isinstance(x, list):
        return [strip_nulls(v) for v in x]
    return x


# `promtool check metrics` lines that dcgm-exporter's own names cause: its
# counters lack _total or are named ..._COUNTER, and its label names are
# camelCase (modelName, also on gpudoctor_gpu_info so it joins with the DCGM
# series). They are kept for compatibility.
PROMTOOL_CAMEL = "label names should be written in 'snake_case' not 'camelCase'"
_PROMTOOL_DCGM_ONLY = ('counter metrics should have "_total" suffix',
                       "metric name should not include type 'counter'")


def promtool_unexpected(output):
    """The lines of promtool's output that are not dcgm-exporter's naming."""
    return [l for l in output.splitlines() if l.strip()
            and not l.endswith(PROMTOOL_CAMEL)
            and not (l.startswith("DCGM_FI_") and l.endswith(_PROMTOOL_DCGM_ONLY))]


def load_scenario(path):
    with open(path) as f:
        return read_trace(f.read())


def write_scenario(header, samples, directory):
    fd, path = tempfile.mkstemp(suffix=".jsonl", dir=directory)
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(header) + "\n")
        for s in samples:
            f.write(json.dumps(s) + "\n")
    return path


def scenario_4gpu():
    return os.path.join(DATA_DIR, "scenario_4gpu.jsonl")


def self_signed_cert(directory, name="server"):
    """(certificate, key) paths: a self-signed certificate made by openssl
    for localhost and 127.0.0.1, valid for a day, as an operator makes one
    for serve's --web-config."""
    crt = os.path.join(directory, name + ".crt")
    key = os.path.join(directory, name + ".key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                    "-keyout", key, "-out", crt, "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return crt, key


def spawn_python(code):
    """A real child process running `code`; the caller kills it."""
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


# A GPU job: a trainer that forks `workers` data-loader workers burning CPU,
# printing "trainer,worker,worker" pids on one line.
TRAINER = r"""
import os, sys, time
workers = []
for _ in range({workers}):
    pid = os.fork()
    if pid == 0:
        end = time.time() + 120
        while time.time() < end:
            pass
        os._exit(0)
    workers.append(pid)
print(",".join(str(p) for p in [os.getpid()] + workers), flush=True)
time.sleep(120)
"""

# A parent that never reaps its child: the child becomes a zombie.
ZOMBIE_PARENT = r"""
import os, time
pid = os.fork()
if pid == 0:
    os._exit(0)
print(f"{os.getpid()},{pid}", flush=True)
time.sleep(120)
"""


def kill_tree(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except Exception:
        pass
    try:
        with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
            children = f.read().split()
        for line in children:
            os.kill(int(line), signal.SIGKILL)
    except Exception:
        pass
    proc.kill()
    proc.wait()


def unused_pid():
    """A pid that no process has (the scenario's 'vanished owner')."""
    with open("/proc/sys/kernel/pid_max") as f:
        pid_max = int(f.read())
    for pid in range(pid_max - 1, 1, -1):
        if not os.path.exists(f"/proc/{pid}"):
            return pid
    raise RuntimeError("no free pid")


class E2E(unittest.TestCase):
    def setUp(self):
        if not FAKE_NVML or not os.path.exists(FAKE_NVML):
            # A prerequisite, not an option: skipping would test nothing.
            self.fail(f"fake libnvidia-ml.so.1 not found (FAKE_NVML_LIB={FAKE_NVML!r})")
        self.tmp = tempfile.TemporaryDirectory()
        # Removed after every cleanup the test adds (they run last in,
        # first out): a tmux pane's close (gd_tmux) reaches its server
        # through a socket in it; removed in tearDown, before them, it left
        # the server and the top in its pane running.
        self.addCleanup(self.tmp.cleanup)
        self.children = []

    def tearDown(self):
        for c in self.children:
            kill_tree(c)
