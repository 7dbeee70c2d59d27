"""Kubernetes pods by their names, end to end: real child processes placed
in pods the way the kubelet places them with the systemd cgroup driver (a
kubepods-burstable-pod<uid>.slice/cri-containerd-<id>.scope folder under
the real cgroup2 mount), a fake kubelet and container runtime over real
Unix sockets (tests/pods/fake_kubelet.py, run with Debian's python3, which
has python3-grpcio and python3-grpc-tools), libgpudoctor-pods.so reading
them, and the fake NVML listing the processes' real pids on the GPUs.

Two pods time-share GPU 0 (replicas ::0 and ::1), a third holds GPU 1, and
a plain process outside any pod uses GPU 2. Runs as root (cgroups): a
missing prerequisite fails. PodDashboard also drives serve's dashboard in
headless Chromium (tests/e2e/cdp.py, so it runs with Debian's python3)."""
import json
import os
import re
import select
import shutil
import signal
import subprocess
import time
import unittest
import uuid

from gd_e2e import E2E, GPUDOCTOR, run
from test_serve import Serve
from test_who_kill import GiB, Scenario, wait_until

# The fake kubelet needs Debian's gRPC for Python: the system python3, not
# whatever python3 is first on PATH.
GRPC_PYTHON = "/usr/bin/python3"
FAKE_KUBELET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pods",
                            "fake_kubelet.py")
# Protos compiled, both sockets listening: slow under a loaded build machine.
KUBELET_START_TIMEOUT_S = 60
# A pod's process: a real process that lives long enough for any test and
# not much longer should the test runner itself be killed.
POD_PROCESS = ["sleep", "120"]
# The fields of a process's "pod" object.
POD_KEYS = ("uid", "namespace", "name", "container", "deleted")
# How long a one-shot command may take when the kubelet hangs (its calls
# take 5 s each): the spec's bound, or the same command without any kubelet
# plus 3 s on a slow (sanitised) build.
HUNG_KUBELET_BOUND_S = 4.0
# A node running a real kubelet: its kubepods slices are not the tests' to
# remove.
REAL_KUBELET = os.path.exists("/var/lib/kubelet")
# serve's /metrics: the pod worker's first reading comes within about 1 s of
# start, then one every 10 s (pods::PodDirectory::kRefresh); a first call
# that misses its 1 s deadline on a loaded machine costs one refresh more.
POD_METRICS_TIMEOUT_S = 30
# A change to the kubelet's state: seen at the next refresh (10 s), with room.
POD_REFRESH_TIMEOUT_S = 25
PROCESS_MEMORY = "gpudoctor_process_gpu_memory_bytes"
POD_INFO = "gpudoctor_gpu_pod_info"
# render_process_families' per-process series: each carries a pod
# process's pod labels (gpudoctor_process_tree_cpu_percent does not).
PER_PROCESS_FAMILIES = (PROCESS_MEMORY, "gpudoctor_process_cpu_percent",
                        "gpudoctor_process_resident_memory_bytes",
                        "gpudoctor_process_sm_utilization_percent",
                        "gpudoctor_process_memory_utilization_percent")
POD_LABELS = ("namespace", "pod", "container")


def cgroup2_mount():
    with open("/proc/mounts") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 3 and fields[2] == "cgroup2":
                return fields[1]
    return None


def pods_library():
    """libgpudoctor-pods.so: $GPUDOCTOR_PODS_LIB, else the build's, beside
    gpudoctor's (BUILD/src/cli/gpudoctor -> BUILD/src/pods/)."""
    env = os.environ.get("GPUDOCTOR_PODS_LIB")
    if env:
        return env
    binary = GPUDOCTOR if os.sep in GPUDOCTOR else (shutil.which(GPUDOCTOR) or GPUDOCTOR)
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(binary))))
    return os.path.join(build, "src", "pods", "libgpudoctor-pods.so")


def cgroup_of(pid):
    """The process's cgroup v2 path (the "0::" line of /proc/PID/cgroup)."""
    with open(f"/proc/{pid}/cgroup") as f:
        for line in f:
            if line.startswith("0::"):
                return line[3:].rstrip("\n")
    return None


def hex64():
    return uuid.uuid4().hex + uuid.uuid4().hex


def write_json_atomically(path, doc):
    """The fake re-reads its state on every call: never let it see half a
    file."""
    with open(path + ".new", "w") as f:
        json.dump(doc, f)
    os.replace(path + ".new", path)


def remove_cgroup(path, timeout=5.0):
    """rmdir of an emptied cgroup folder; its last process may take a moment
    to leave once killed and reaped."""
    def gone():
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            return False
    if not wait_until(gone, timeout):
        raise AssertionError(f"cgroup {path} could not be removed: "
                             f"{open(os.path.join(path, 'cgroup.procs')).read()!r} left in it")


class Pod:
    """One pod with one container and one real process in its cgroup."""

    def __init__(self, namespace, name, container, devices):
        self.namespace, self.name, self.container = namespace, name, container
        self.devices = devices  # device ids the kubelet gave the container
        self.uid = str(uuid.uuid4())
        self.container_id = hex64()
        self.sandbox_id = hex64()
        self.runtime_only = False
        self.pid = None
        self.cgroup = None  # the container's folder, relative to the mount

    def text(self):
        return f"{self.namespace}/{self.name}/{self.container}"

    def state(self):
        p = {"namespace": self.namespace, "name": self.name, "uid": self.uid,
             "sandbox_id": self.sandbox_id,
             "containers": [{"name": self.container, "id": self.container_id,
                             "devices": [{"resource": "nvidia.com/gpu", "ids": self.devices}]}]}
        if self.runtime_only:
            p["runtime_only"] = True
        return p

    def expected(self, deleted=False):
        return {"uid": self.uid, "namespace": self.namespace, "name": self.name,
                "container": self.container, "deleted": deleted}

    def uid_only(self, deleted):
        return {"uid": self.uid, "namespace": None, "name": None, "container": None,
                "deleted": deleted}


class FakeKubelet:
    """tests/pods/fake_kubelet.py on two Unix sockets in `directory`,
    serving STATE.json (rewritten with `write`)."""

    def __init__(self, directory):
        self.state_path = os.path.join(directory, "state.json")
        self.pod_resources = os.path.join(directory, "kubelet.sock")
        self.cri = os.path.join(directory, "cri.sock")
        self.stderr_path = os.path.join(directory, "fake_kubelet.stderr")
        self.directory = directory
        self.proc = None

    def write(self, state):
        write_json_atomically(self.state_path, state)

    def start(self, state):
        """Starts it and waits for its "ready" line; returns None, or why it
        did not become ready."""
        self.write(state)
        # The fake compiles the protos into a mkdtemp folder it leaves
        # behind: let that be inside the test's temp dir.
        env = dict(os.environ, TMPDIR=self.directory, PYTHONDONTWRITEBYTECODE="1")
        with open(self.stderr_path, "w") as err:
            self.proc = subprocess.Popen(
                [GRPC_PYTHON, FAKE_KUBELET, "--state", self.state_path,
                 "--pod-resources", self.pod_resources, "--cri", self.cri],
                stdout=subprocess.PIPE, stderr=err, env=env, start_new_session=True)
        if self._wait_for_line(b"ready", KUBELET_START_TIMEOUT_S):
            return None
        return (f"fake_kubelet.py did not print 'ready' within {KUBELET_START_TIMEOUT_S} s "
                f"(exit status {self.proc.poll()}); {GRPC_PYTHON} needs python3-grpcio and "
                f"python3-grpc-tools. Its stderr:\n{self.stderr()}")

    def _wait_for_line(self, want, timeout):
        fd = self.proc.stdout.fileno()
        buf = b""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return False
            chunk = os.read(fd, 4096)
            if not chunk:
                return False  # it exited
            buf += chunk
            if want in buf.splitlines():
                return True

    def stderr(self):
        try:
            with open(self.stderr_path) as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.proc.stdout.close()
        self.proc = None


class PodsCase(E2E):
    """The node: three pods and a plain process on the fake's GPUs, a fake
    kubelet listing the pods."""

    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            self.fail("these tests place processes in cgroups: run them as root")
        self.cgroup_root = cgroup2_mount()
        if not self.cgroup_root:
            self.fail("no cgroup2 mount in /proc/mounts")
        self.shared_cgroups = set()
        self.pods_lib = pods_library()
        if not os.path.isfile(self.pods_lib):
            self.fail(f"libgpudoctor-pods.so not found at {self.pods_lib} "
                      "(set GPUDOCTOR_PODS_LIB or build target gpudoctor-pods)")
        if not os.access(GRPC_PYTHON, os.X_OK):
            self.fail(f"{GRPC_PYTHON} is missing: the fake kubelet needs Debian's python3 "
                      "with python3-grpcio and python3-grpc-tools")

        scenario = Scenario(self.tmp.name)
        uuids = {g["index"]: g["uuid"] for g in scenario.header["gpus"]}
        self.gpu_uuids = uuids
        self.train0 = Pod("ml", "train-0", "main", [uuids[0] + "::0"])
        self.train1 = Pod("ml", "train-1", "main", [uuids[0] + "::1"])
        self.serve0 = Pod("infer", "serve-0", "server", [uuids[1]])
        self.pods = [self.train0, self.train1, self.serve0]
        for pod in self.pods:
            self.place(pod)
        # Not in a pod, wherever the test runner itself runs: a folder of
        # its own outside the kubepods tree.
        self.plain = self.start_process(self.make_cgroup([f"gdtest-{uuid.uuid4()}.scope"]))
        self.scenario = scenario.write({
            0: [(self.train0.pid, 10 * GiB), (self.train1.pid, 6 * GiB)],
            1: [(self.serve0.pid, 20 * GiB)],
            2: [(self.plain, 2 * GiB)]})

        self.kubelet = FakeKubelet(self.tmp.name)
        self.addCleanup(self.kubelet.stop)
        why = self.kubelet.start(self.state())
        if why:
            self.fail(why)

    def tearDown(self):
        # Processes, cgroup folders and the kubelet go before the temp dir.
        self.doCleanups()
        super().tearDown()

    # The fixture's parts.

    def state(self, pods=None, faults=None):
        pods = self.pods if pods is None else pods
        uuids = self.gpu_uuids
        s = {"allocatable": [{"resource": "nvidia.com/gpu",
                              "ids": [f"{uuids[0]}::{r}" for r in range(4)] + [uuids[1]]}],
             "pods": [p.state() for p in pods]}
        if faults:
            s["faults"] = faults
        return s

    def start_process(self, cgroup_dir=None):
        """A real `sleep`, moved into `cgroup_dir` when given; its pid. It is
        killed (and reaped) at cleanup, before its folder is removed."""
        proc = subprocess.Popen(POD_PROCESS, stdin=subprocess.DEVNULL)

        def kill():
            proc.kill()
            proc.wait(timeout=10)
        self.addCleanup(kill)
        if cgroup_dir:
            with open(os.path.join(cgroup_dir, "cgroup.procs"), "w") as f:
                f.write(str(proc.pid))
        return proc.pid

    def make_cgroup(self, parts):
        """mkdir of each folder of `parts` under the cgroup2 mount. The pod's
        own two folders are this test's and must go at cleanup. The kubepods
        slices above them are shared with the other tests running at the
        same time: created when missing (again, should another test's
        cleanup remove one under us), removed at cleanup when empty, and
        left alone on a node with a real kubelet."""
        path = self.cgroup_root
        for i, part in enumerate(parts):
            path = os.path.join(path, part)
            shared = i < len(parts) - 2
            if shared and not REAL_KUBELET and path not in self.shared_cgroups:
                self.shared_cgroups.add(path)
                self.addCleanup(_rmdir_if_empty, path)
            for _ in range(10):
                try:
                    os.mkdir(path)
                except FileExistsError:
                    if not shared:
                        self.fail(f"cgroup {path} exists already")
                except FileNotFoundError:
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    continue
                else:
                    if not shared:
                        self.addCleanup(remove_cgroup, path)
                break
            else:
                self.fail(f"could not create cgroup {path}")
        return path

    def place(self, pod):
        """The pod's folders as the kubelet (systemd driver) and containerd
        name them, with the pod's process in the container's."""
        uid = pod.uid.replace("-", "_")
        parts = ["kubepods.slice", "kubepods-burstable.slice",
                 f"kubepods-burstable-pod{uid}.slice",
                 f"cri-containerd-{pod.container_id}.scope"]
        path = self.make_cgroup(parts)
        pod.pid = self.start_process(path)
        pod.cgroup = "/" + "/".join(parts)
        seen = cgroup_of(pod.pid)
        if seen != pod.cgroup:
            self.fail(f"pid {pod.pid} is in cgroup {seen!r}, not {pod.cgroup!r}")

    def env(self, sockets=True):
        e = {"GPUDOCTOR_PODS_LIB": self.pods_lib, "COLUMNS": "250"}
        if sockets:
            e["GPUDOCTOR_POD_RESOURCES_SOCKET"] = self.kubelet.pod_resources
            e["GPUDOCTOR_CRI_SOCKET"] = self.kubelet.cri
        else:
            e["GPUDOCTOR_POD_RESOURCES_SOCKET"] = "none"
            e["GPUDOCTOR_CRI_SOCKET"] = "none"
        return e

    # gpudoctor.

    def gd(self, args, sockets=True, timeout=30):
        p = run(args, scenario=self.scenario, env=self.env(sockets), timeout=timeout)
        self.assertEqual(p.returncode, 0, f"{args}: {p.stderr}")
        return p

    def ps_rows(self, *args, sockets=True):
        """`ps --json` rows by pid."""
        doc = json.loads(self.gd(["ps", "--json", "--serve", "none"] + list(args),
                                 sockets=sockets).stdout)
        rows = {}
        for r in doc["processes"]:
            self.assertNotIn(r["pid"], rows, f"pid {r['pid']} listed twice: {doc}")
            rows[r["pid"]] = r
        return rows

    def ps_text(self, *args, sockets=True):
        return self.gd(["ps", "--wide", "--serve", "none"] + list(args), sockets=sockets).stdout

    def who_holders(self, sockets=True):
        """`who --json`: each GPU's listed processes by pid."""
        doc = json.loads(self.gd(["who", "--json"], sockets=sockets).stdout)
        out = {}
        for g in doc["gpus"]:
            for h in g["processes"]:
                self.assertNotIn(h["pid"], out, f"pid {h['pid']} listed twice: {doc}")
                out[h["pid"]] = h
        return out

    def of(self, rows, pid):
        """The row of `pid` (ps_rows, who_holders, or a decoded listing)."""
        if isinstance(rows, list):
            rows = {r["pid"]: r for r in rows}
        self.assertIn(pid, rows, f"pid {pid} is not listed: {sorted(rows)}")
        return rows[pid]

    def assertPod(self, row, expected):
        """The row's "pod" object has the expected fields (more may follow)."""
        self.assertIn("pod", row, row)
        pod = row["pod"]
        if expected is None:
            self.assertIsNone(pod, row)
            return
        self.assertIsInstance(pod, dict, row)
        missing = [k for k in POD_KEYS if k not in pod]
        self.assertEqual(missing, [], f"pod object lacks {missing}: {pod}")
        self.assertEqual({k: pod[k] for k in POD_KEYS}, expected, row)

    def assertUidOnlyNotDeleted(self, row, pod):
        """Nothing but the cgroup's UID known, and the pod not called
        deleted: a kubelet that did not answer says nothing about deletion
        (null, unknown, is expected; false is not wrong)."""
        self.assertIsInstance(row.get("pod"), dict, row)
        deleted = row["pod"].get("deleted")
        self.assertIn(deleted, (None, False),
                      f"{pod.name}: called deleted when the kubelet did not answer: {row}")
        self.assertPod(row, pod.uid_only(deleted=deleted))


def _rmdir_if_empty(path):
    try:
        os.rmdir(path)
    except OSError:
        pass  # another test's pods are still in it, or it is gone already


class PodNames(PodsCase):
    def test_ps_json_names_each_process_pod(self):
        rows = self.ps_rows()
        for pod in self.pods:
            self.assertPod(self.of(rows, pod.pid), pod.expected())
        self.assertEqual(self.of(rows, self.train0.pid)["gpu"], 0)
        self.assertEqual(self.of(rows, self.train1.pid)["gpu"], 0)
        self.assertEqual(self.of(rows, self.serve0.pid)["gpu"], 1)
        self.assertPod(self.of(rows, self.plain), None)

    def test_ps_text_has_a_pod_column(self):
        text = self.ps_text()
        header = text.splitlines()[0]
        self.assertIn("POD", header.split(), text)
        for pod in self.pods:
            line = _line_of(text, pod.pid)
            self.assertIsNotNone(line, f"pid {pod.pid} not in:\n{text}")
            self.assertIn(pod.text(), line, text)
            self.assertNotIn("(deleted)", line, text)
        self.assertNotIn("(deleted)", text)
        plain = _line_of(text, self.plain)
        self.assertIsNotNone(plain, text)
        for pod in self.pods:
            self.assertNotIn(pod.text(), plain)

    def test_who_names_the_pod_of_each_holder(self):
        holders = self.who_holders()
        for pod in self.pods:
            self.assertPod(self.of(holders, pod.pid), pod.expected())
        self.assertPod(self.of(holders, self.plain), None)
        text = self.gd(["who"]).stdout
        for pod in self.pods:
            self.assertIn(pod.text(), text)
        self.assertNotIn("(deleted)", text)


class PodFilters(PodsCase):
    def test_pod_by_name_and_by_namespace_and_name(self):
        for arg, want in (("train-0", [self.train0]), ("ml/train-1", [self.train1]),
                          ("infer/serve-0", [self.serve0]), ("infer/train-0", []),
                          ("no-such-pod", [])):
            rows = self.ps_rows("--pod", arg)
            self.assertEqual(sorted(rows), sorted(p.pid for p in want), f"--pod {arg}: {rows}")
            text = self.ps_text("--pod", arg)
            for pod in self.pods:
                if pod in want:
                    self.assertIn(pod.text(), text, f"--pod {arg}")
                else:
                    self.assertNotIn(pod.text(), text, f"--pod {arg}")
                    self.assertIsNone(_line_of(text, pod.pid), f"--pod {arg}:\n{text}")
            self.assertIsNone(_line_of(text, self.plain), f"--pod {arg}:\n{text}")

    def test_namespace(self):
        for ns, want in (("ml", [self.train0, self.train1]), ("infer", [self.serve0]),
                         ("kube-system", [])):
            rows = self.ps_rows("--namespace", ns)
            self.assertEqual(sorted(rows), sorted(p.pid for p in want), f"--namespace {ns}")
            text = self.ps_text("--namespace", ns)
            for pod in self.pods:
                self.assertEqual(pod.text() in text, pod in want, f"--namespace {ns}:\n{text}")
            self.assertIsNone(_line_of(text, self.plain), f"--namespace {ns}:\n{text}")
        # Both filters: the pod named in that namespace only.
        rows = self.ps_rows("--namespace", "ml", "--pod", "train-1")
        self.assertEqual(sorted(rows), [self.train1.pid])


class DeletedPods(PodsCase):
    def test_a_pod_the_kubelet_dropped_and_one_nobody_lists(self):
        # train-1: the kubelet no longer lists it, the runtime still does.
        # serve-0: gone from both; only its cgroup's UID is left.
        self.train1.runtime_only = True
        self.kubelet.write(self.state(pods=[self.train0, self.train1]))

        rows = self.ps_rows()
        self.assertPod(self.of(rows, self.train0.pid), self.train0.expected())
        self.assertPod(self.of(rows, self.train1.pid), self.train1.expected(deleted=True))
        self.assertPod(self.of(rows, self.serve0.pid), self.serve0.uid_only(deleted=True))
        self.assertPod(self.of(rows, self.plain), None)

        text = self.ps_text()
        self.assertIn(self.train1.text() + " (deleted)", _line_of(text, self.train1.pid) or "",
                      text)
        self.assertNotIn("(deleted)", _line_of(text, self.train0.pid) or "", text)
        self.assertIn(self.train0.text(), text)
        gone = f"{self.serve0.namespace}/{self.serve0.name}"
        self.assertNotIn(gone, text)

        holders = self.who_holders()
        self.assertPod(self.of(holders, self.train0.pid), self.train0.expected())
        self.assertPod(self.of(holders, self.train1.pid), self.train1.expected(deleted=True))
        self.assertPod(self.of(holders, self.serve0.pid), self.serve0.uid_only(deleted=True))
        text = self.gd(["who"]).stdout
        self.assertIn(self.train1.text() + " (deleted)", text)
        self.assertNotIn(self.train0.text() + " (deleted)", text)
        self.assertIn(self.train0.text(), text)
        self.assertNotIn(gone, text)


class NoKubelet(PodsCase):
    def test_no_sockets_uid_from_the_cgroup_deletion_unknown(self):
        rows = self.ps_rows(sockets=False)
        for pod in self.pods:
            self.assertPod(self.of(rows, pod.pid), pod.uid_only(deleted=None))
        self.assertPod(self.of(rows, self.plain), None)
        holders = self.who_holders(sockets=False)
        for pod in self.pods:
            self.assertPod(self.of(holders, pod.pid), pod.uid_only(deleted=None))
        text = self.ps_text(sockets=False)
        for pod in self.pods:
            self.assertNotIn(pod.text(), text)
        self.assertNotIn("(deleted)", text)

    def _bound(self):
        start = time.monotonic()
        self.ps_text(sockets=False)
        return max(HUNG_KUBELET_BOUND_S, time.monotonic() - start + 3.0)

    def test_a_hung_kubelet_costs_a_bounded_wait(self):
        bound = self._bound()
        self.kubelet.write(self.state(faults={"delay_s": 5}))
        for args in (["ps", "--wide", "--serve", "none"], ["ps", "--json", "--serve", "none"]):
            start = time.monotonic()
            p = self.gd(args, timeout=30)
            took = time.monotonic() - start
            self.assertLess(took, bound, f"{args} waited {took:.1f} s on a hung kubelet")
            if "--json" in args:
                rows = {r["pid"]: r for r in json.loads(p.stdout)["processes"]}
                for pod in self.pods:
                    self.assertUidOnlyNotDeleted(self.of(rows, pod.pid), pod)
                self.assertPod(self.of(rows, self.plain), None)
            else:
                for pod in self.pods:
                    self.assertIsNotNone(_line_of(p.stdout, pod.pid), p.stdout)
                    self.assertNotIn(pod.text(), p.stdout)
                self.assertNotIn("(deleted)", p.stdout)

    def test_an_unavailable_kubelet_leaves_the_uid(self):
        self.kubelet.write(self.state(faults={"fail": True}))
        rows = self.ps_rows()
        for pod in self.pods:
            self.assertUidOnlyNotDeleted(self.of(rows, pod.pid), pod)
        self.assertPod(self.of(rows, self.plain), None)
        holders = self.who_holders()
        for pod in self.pods:
            self.assertUidOnlyNotDeleted(self.of(holders, pod.pid), pod)
        text = self.ps_text()
        for pod in self.pods:
            self.assertNotIn(pod.text(), text)
        self.assertNotIn("(deleted)", text)


class PodMetrics(PodsCase):
    """`gpudoctor serve` on the same node: dcgm-exporter's pod labels on
    each pod process's series, and one gpudoctor_gpu_pod_info series per
    device the kubelet allocated."""

    def setUp(self):
        super().setUp()
        self.server = Serve(self.scenario, ["--no-db"], self.tmp, env=self.env())
        # Cleanups run last-in first-out: serve stops before the kubelet,
        # the pods' processes and their folders.
        self.addCleanup(self.server.kill)

    def scrape(self):
        """(body, [(name, labels, value)]) of one GET /metrics."""
        status, _, body = self.server.get("/metrics")
        self.assertEqual(status, 200, body[:2000])
        return body, parse_series(body)

    def wait_scrape(self, cond, timeout, what):
        """The parsed /metrics once `cond(series)` holds; fails after
        `timeout` s naming `what`, with the pod lines of the last scrape."""
        end = time.monotonic() + timeout
        while True:
            body, series = self.scrape()
            if cond(series):
                return series
            if time.monotonic() >= end:
                break
            time.sleep(0.2)
        lines = [l for l in body.splitlines()
                 if l.startswith((PROCESS_MEMORY, POD_INFO, "gpudoctor_collect"))]
        self.fail(f"{what}: not within {timeout} s. Last /metrics (those families):\n"
                  + "\n".join(lines[:80]) + "\nserve's log:\n"
                  + "\n".join(self.server.log()[-30:])
                  + f"\nfake kubelet's stderr:\n{self.kubelet.stderr()}")

    def pods_named(self, series):
        """Both services read into serve's sample: the pod info is out and
        every pod's process carries its pod's name."""
        if not _select(series, POD_INFO):
            return False
        for pod in self.pods:
            rows = _select(series, PROCESS_MEMORY, pid=str(pod.pid))
            if not rows or any("pod" not in labels for labels, _ in rows):
                return False
        return True

    def pod_info_expected(self, pod, gpu, replica):
        uuid_ = self.gpu_uuids[gpu]
        return {"gpu": str(gpu), "uuid": uuid_, "namespace": pod.namespace, "pod": pod.name,
                "container": pod.container, "resource": "nvidia.com/gpu",
                "replica": "" if replica is None else str(replica)}

    def assertPodInfo(self, series, expected):
        """The pod info series are exactly `expected` (label sets, without
        Hostname), each 1, each with a Hostname."""
        rows = _select(series, POD_INFO)
        for labels, value in rows:
            self.assertTrue(labels.get("Hostname"), f"no Hostname label: {labels}")
            self.assertEqual(value, 1, labels)
        got = sorted(sorted((k, v) for k, v in labels.items() if k != "Hostname")
                     for labels, _ in rows)
        want = sorted(sorted(e.items()) for e in expected)
        self.assertEqual(got, want)

    def test_each_pod_has_its_own_process_series(self):
        series = self.wait_scrape(self.pods_named, POD_METRICS_TIMEOUT_S,
                                  "every pod process's series named with its pod")
        # train-0 and train-1 time-share GPU 0: each has its own memory.
        for pod, gpu, used in ((self.train0, "0", 10 * GiB), (self.train1, "0", 6 * GiB),
                               (self.serve0, "1", 20 * GiB)):
            rows = _select(series, PROCESS_MEMORY, pid=str(pod.pid))
            self.assertEqual(len(rows), 1, f"{pod.text()}: {rows}")
            labels, value = rows[0]
            want = {"gpu": gpu, "pid": str(pod.pid), "namespace": pod.namespace,
                    "pod": pod.name, "container": pod.container}
            self.assertEqual({k: labels.get(k) for k in want}, want, labels)
            self.assertTrue(labels.get("Hostname"), f"no Hostname label: {labels}")
            self.assertEqual(value, used, labels)
            # Its other per-process series carry the same pod.
            for name in PER_PROCESS_FAMILIES:
                for other, _ in _select(series, name, pid=str(pod.pid)):
                    self.assertEqual({k: other.get(k) for k in POD_LABELS},
                                     {k: want[k] for k in POD_LABELS}, f"{name}{other}")
        # The process outside any pod: no pod labels on any of its series.
        rows = _select(series, PROCESS_MEMORY, pid=str(self.plain))
        self.assertEqual(len(rows), 1, rows)
        labels, value = rows[0]
        self.assertEqual(labels.get("gpu"), "2", labels)
        self.assertEqual(value, 2 * GiB, labels)
        for name in PER_PROCESS_FAMILIES:
            for other, _ in _select(series, name, pid=str(self.plain)):
                for k in POD_LABELS:
                    self.assertNotIn(k, other, f"{name}{other}")

    def test_pod_info_per_allocation(self):
        series = self.wait_scrape(self.pods_named, POD_METRICS_TIMEOUT_S,
                                  "the pods read into serve's sample")
        self.assertPodInfo(series, [self.pod_info_expected(self.train0, 0, 0),
                                    self.pod_info_expected(self.train1, 0, 1),
                                    self.pod_info_expected(self.serve0, 1, None)])

    def test_a_pod_idle_on_its_gpu_still_has_its_info(self):
        self.wait_scrape(self.pods_named, POD_METRICS_TIMEOUT_S,
                         "the pods read into serve's sample")
        # A pod the kubelet gave GPU 2 that runs nothing (yet): no process,
        # no cgroup folder; the runtime does not list it.
        idle = Pod("batch", "idle-0", "worker", [self.gpu_uuids[2]])
        entry = idle.state()
        entry["kubelet_only"] = True
        state = self.state()
        state["allocatable"][0]["ids"].append(self.gpu_uuids[2])
        state["pods"].append(entry)
        self.kubelet.write(state)

        series = self.wait_scrape(
            lambda s: bool(_select(s, POD_INFO, gpu="2")), POD_REFRESH_TIMEOUT_S,
            "the idle pod's gpudoctor_gpu_pod_info{gpu=\"2\"} after the kubelet's refresh")
        self.assertPodInfo(series, [self.pod_info_expected(self.train0, 0, 0),
                                    self.pod_info_expected(self.train1, 0, 1),
                                    self.pod_info_expected(self.serve0, 1, None),
                                    self.pod_info_expected(idle, 2, None)])
        # GPU 2's only process is not in a pod: its allocation to a pod
        # names no process.
        for name in PER_PROCESS_FAMILIES:
            for labels, _ in _select(series, name, gpu="2"):
                for k in POD_LABELS:
                    self.assertNotIn(k, labels, f"{name}{labels}")
        self.assertNotIn(idle.name, [labels.get("pod") for name, labels, _ in series
                                     if name in PER_PROCESS_FAMILIES])
        # dcgm-exporter's mapping: a GPU given to one container carries that
        # pod's labels on its DCGM series (GPU 1: serve-0, GPU 2: idle-0);
        # GPU 0, time-shared by two pods, carries none.
        for gpu, pod in (("0", None), ("1", self.serve0), ("2", idle)):
            util = _select(series, "DCGM_FI_DEV_GPU_UTIL", gpu=gpu)
            self.assertEqual(len(util), 1, util)
            labels = util[0][0]
            want = ({} if pod is None else
                    {"namespace": pod.namespace, "pod": pod.name, "container": pod.container})
            self.assertEqual({k: labels[k] for k in POD_LABELS if k in labels}, want,
                             f"GPU {gpu}: {labels}")


# The dashboard's process table as a user reads it (web/src/app.js): the
# POD column found by its header, then each process row's cell there, with
# its title (the whole label), whether its text is cut off (ellipsised),
# and the element saying the pod is deleted: whether it is shown inside the
# cell and in another colour than the name.
POD_TABLE_JS = r"""(() => {
  const ths = Array.from(document.querySelectorAll('#procs thead th'));
  const col = ths.findIndex(t => t.innerText.trim().startsWith('POD'));
  const rows = {};
  for (const tr of document.querySelectorAll('#procs tbody tr[data-pid]')) {
    const td = col < 0 ? null : tr.children[col];
    if (!td) { rows[tr.dataset.pid] = null; continue; }
    const box = td.getBoundingClientRect();
    const leaves = Array.from(td.querySelectorAll('*')).filter(e => !e.children.length);
    const mark = leaves.find(e => /deleted/.test(e.textContent));
    const name = leaves.find(e => e !== mark);
    let deleted = null;
    if (mark) {
      const r = mark.getBoundingClientRect();
      deleted = {shown: r.width > 0 && r.height > 0 && r.left >= box.left - 0.5 && r.right <= box.right + 0.5,
                 color: getComputedStyle(mark).color,
                 name_color: name ? getComputedStyle(name).color : getComputedStyle(td).color};
    }
    rows[tr.dataset.pid] = {text: td.innerText, title: td.getAttribute('title'),
                            clipped: [td].concat(leaves).some(e => e.scrollWidth > e.clientWidth + 1),
                            width: box.width, deleted: deleted};
  }
  return {header: ths.map(t => t.innerText.trim()), col: col, rows: rows};
})()"""
# Kubernetes' longest pod name (a DNS subdomain; gpudoctor keeps 253
# characters of any name): the dashboard's cell must stay narrow.
LONG_POD_NAME = ("train-1-" + "a1b2c3d4e5." * 30)[:252] + "z"
# A container name no kubelet would accept, as a runtime could still report
# it: the page shows it as text.
HOSTILE_CONTAINER = "<img src=x onerror=alert(1)>"
# The widest a pod cell may get with a 253-character name (app.css).
POD_CELL_MAX_PX = 400


class PodDashboard(PodsCase):
    """The dashboard of `gpudoctor serve` on the same node, in headless
    Chromium (tests/e2e/cdp.py; Debian's python3 with python3-websocket):
    its process table has a POD column naming each process's pod as `ps`
    does, a deleted pod marked, a long name ellipsised with the whole label
    in the cell's title."""

    def setUp(self):
        super().setUp()
        # Imported here: the other classes of this file run without
        # python3-websocket.
        from dashboard_page import open_dashboard, poll
        from test_web import ARTIFACTS
        self.open_dashboard, self.poll, self.artifacts = open_dashboard, poll, ARTIFACTS
        self.train1.name = LONG_POD_NAME
        self.serve0.container = HOSTILE_CONTAINER
        self.kubelet.write(self.state())
        self.server = self.page = None

    def open(self, sockets=True):
        """serve (with or without the kubelet's sockets) and the dashboard
        in Chromium; closed before the kubelet and the pods' processes."""
        self.server, self.page = self.open_dashboard(
            self, self.scenario, ["--no-db"], env=self.env(sockets))

    def table(self):
        return self.page.evaluate(POD_TABLE_JS)

    def wait_table(self, cond, timeout, what):
        """The table once `cond(table)` holds; fails after `timeout` s with
        the last table, the API's rows, serve's log and the kubelet's."""
        ok, table = self.poll(self.table, cond, timeout, every=0.2)
        if ok:
            return table
        _, _, api = self.server.get("/api/v1/processes")
        self.fail(f"{what}: not within {timeout} s.\nThe dashboard's table: "
                  f"{json.dumps(table, indent=1)}\n/api/v1/processes: {api[:4000]}\n"
                  "serve's log:\n" + "\n".join(self.server.log()[-30:])
                  + f"\nfake kubelet's stderr:\n{self.kubelet.stderr()}\n"
                  f"page errors: {self.page.errors()}")

    def cell(self, table, pid):
        self.assertIn(str(pid), table["rows"], f"pid {pid} has no row: {table}")
        return table["rows"][str(pid)]

    def pod_texts(self, table):
        """Each process row's POD cell text, whitespace runs as one space."""
        return {pid: None if c is None else " ".join(c["text"].split())
                for pid, c in table["rows"].items()}

    def shows(self, want):
        """A condition: the POD column shows `want` ({pid: text})."""
        return lambda t: t["col"] >= 0 and all(self.pod_texts(t).get(str(pid)) == text
                                               for pid, text in want.items())

    def screenshot(self, name):
        os.makedirs(self.artifacts, exist_ok=True)
        self.page.screenshot(os.path.join(self.artifacts, name))

    def test_the_process_table_names_each_pod(self):
        self.open()
        want = {pod.pid: pod.text() for pod in self.pods}
        want[self.plain] = ""
        table = self.wait_table(self.shows(want), POD_METRICS_TIMEOUT_S,
                                "the POD column naming every pod process's pod")
        self.screenshot("dashboard-pods.png")
        self.assertIn("POD", [h.split()[0] for h in table["header"] if h], table["header"])
        # POD comes before COMMAND, as in `ps`.
        self.assertTrue(table["header"][-1].startswith("COMMAND"), table["header"])
        for pod in self.pods:
            c = self.cell(table, pod.pid)
            self.assertEqual(c["title"], pod.text(), c)
            self.assertIsNone(c["deleted"], f"{pod.text()} marked deleted: {c}")
        plain = self.cell(table, self.plain)
        self.assertEqual(plain["text"].strip(), "", plain)
        self.assertFalse(plain["title"], plain)
        # The 253-character name: cut off in a narrow cell, whole in its
        # title.
        long = self.cell(table, self.train1.pid)
        self.assertTrue(long["clipped"], long)
        self.assertLessEqual(long["width"], POD_CELL_MAX_PX, long)
        self.assertEqual(long["title"], self.train1.text())
        # The hostile container name is text: no element made of it, no
        # dialog.
        self.assertEqual(self.page.evaluate("document.querySelectorAll('#procs img').length"), 0)
        self.assertEqual(self.page.dialogs(), [])
        # Sorting by the POD column orders the pod rows by their names.
        self.page.evaluate("Array.from(document.querySelectorAll('#procs th'))"
                           ".find(t => t.innerText.trim().startsWith('POD')).click()")
        order = self.page.evaluate("Array.from(document.querySelectorAll('#procs tbody tr[data-pid]'))"
                                   ".map(r => Number(r.dataset.pid))")
        pods_sorted = [p.pid for p in sorted(self.pods, key=lambda p: p.text())]
        self.assertEqual([pid for pid in order if pid != self.plain], pods_sorted, order)
        self.assertEqual(self.page.errors(), [])

    def test_a_deleted_pod_is_marked(self):
        self.open()
        self.wait_table(self.shows({pod.pid: pod.text() for pod in self.pods}),
                        POD_METRICS_TIMEOUT_S, "the POD column naming every pod process's pod")
        # train-1 (the long name): the kubelet no longer lists it, the
        # runtime still does. serve-0: gone from both, only its cgroup's
        # UID left.
        self.train1.runtime_only = True
        self.kubelet.write(self.state(pods=[self.train0, self.train1]))
        want = {self.train0.pid: self.train0.text(),
                self.train1.pid: self.train1.text() + " (deleted)",
                self.serve0.pid: f"pod {self.serve0.uid} (deleted)",
                self.plain: ""}
        table = self.wait_table(self.shows(want), POD_REFRESH_TIMEOUT_S,
                                "the POD column marking train-1 and serve-0 deleted")
        self.screenshot("dashboard-pods-deleted.png")
        for pid in (self.train1.pid, self.serve0.pid):
            c = self.cell(table, pid)
            self.assertEqual(c["title"], want[pid], c)
            mark = c["deleted"]
            self.assertIsNotNone(mark, f"pid {pid}: nothing in its POD cell says deleted: {c}")
            # In view, even after the long name's ellipsis, and in another
            # colour.
            self.assertTrue(mark["shown"], c)
            self.assertNotEqual(mark["color"], mark["name_color"], c)
        self.assertIsNone(self.cell(table, self.train0.pid)["deleted"], table)
        self.assertNotIn("deleted", self.pod_texts(table)[str(self.train0.pid)])
        self.assertEqual(self.page.errors(), [])

    def test_without_the_kubelet_the_pod_uid(self):
        self.open(sockets=False)
        want = {pod.pid: f"pod {pod.uid}" for pod in self.pods}
        want[self.plain] = ""
        table = self.wait_table(self.shows(want), POD_METRICS_TIMEOUT_S,
                                "the POD column naming each pod by its cgroup's UID")
        for pod in self.pods:
            self.assertIsNone(self.cell(table, pod.pid)["deleted"], table)
        self.assertEqual(self.page.errors(), [])


def _line_of(text, pid):
    """The line of `ps`/`who` text whose PID cell is `pid` (a whole word),
    or None."""
    pattern = re.compile(rf"(^|\s){pid}(\s|$)")
    for line in text.splitlines():
        if pattern.search(line):
            return line
    return None


_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_PAIR = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\\n]|\\.)*)"\s*')
_ESCAPED = re.compile(r"\\(.)")


def parse_series(text):
    """Prometheus text exposition -> [(name, {label: value}, float)] in
    order, label values unescaped (\\\\, \\" and \\n); a line that is not a
    sample or a comment fails."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _METRIC_NAME.match(line)
        if not m:
            raise AssertionError(f"/metrics line {n}: no metric name: {line!r}")
        name, pos, labels = m.group(0), m.end(), {}
        if line.startswith("{", pos):
            pos += 1
            while True:
                while line.startswith(" ", pos):
                    pos += 1
                if line.startswith("}", pos):  # {} or a trailing comma
                    pos += 1
                    break
                m = _LABEL_PAIR.match(line, pos)
                if not m:
                    raise AssertionError(f"/metrics line {n}: bad label at {pos}: {line!r}")
                key = m.group(1)
                if key in labels:
                    raise AssertionError(f"/metrics line {n}: label {key} twice: {line!r}")
                labels[key] = _ESCAPED.sub(
                    lambda e: "\n" if e.group(1) == "n" else e.group(1), m.group(2))
                pos = m.end()
                if line.startswith(",", pos):
                    pos += 1
                elif line.startswith("}", pos):
                    pos += 1
                    break
                else:
                    raise AssertionError(f"/metrics line {n}: bad labels at {pos}: {line!r}")
        fields = line[pos:].split()
        if len(fields) not in (1, 2):  # the value, and a timestamp maybe
            raise AssertionError(f"/metrics line {n}: bad value: {line!r}")
        out.append((name, labels, float(fields[0])))
    return out


def _select(series, name, **labels):
    """[(labels, value)] of the series of `name` whose labels include
    `labels` (a subset: Hostname and the rest may follow)."""
    return [(l, v) for n, l, v in series
            if n == name and all(l.get(k) == want for k, want in labels.items())]


if __name__ == "__main__":
    unittest.main()
