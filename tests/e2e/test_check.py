"""gpudoctor check, the health gate of a prolog, end to end on tracegen's
idle 8-GPU node replayed by the fake NVML: a healthy node, an Xid 79 in the
kernel log, a dead job's memory, live processes holding a GPU (listed by
NVML, or holding its device files), a hung NVML call, usage errors; and
deploy/slurm/prolog.sh driving it with a fake scontrol."""
import json
import os
import pwd
import re
import subprocess
import sys
import time
import unittest

from gd_e2e import E2E, FAKE_NVML, GPUDOCTOR, TRAINER, spawn_python, unused_pid, write_scenario
from test_export import TRACEGEN

GiB = 1 << 30
ME = pwd.getpwuid(os.getuid()).pw_name
DEPLOY = os.path.join(os.path.dirname(__file__), "..", "..", "deploy")
PROLOG = os.path.join(DEPLOY, "slurm", "prolog.sh")
NPD_CONFIG = os.path.join(DEPLOY, "kubernetes", "node-problem-detector", "gpudoctor-check.json")

# Holds the device files it is given open, prints its pid, sleeps.
HOLDER = r"""
import os, sys, time
files = [open(p, "rb") for p in sys.argv[1:]]
print(os.getpid(), flush=True)
time.sleep(120)
"""


def reason_time(reason):
    """The HH:MM:SS a drain reason ends with (before "; +N more")."""
    m = re.search(r" (\d\d:\d\d:\d\d)(; \+\d+ more)?$", reason.rstrip("\n"))
    return m.group(1) if m else None


def logged_hms(stamp_s):
    """HH:MM:SS (UTC) of a kernel line stamped `stamp_s` seconds after
    boot, as gpudoctor works it out (boot = now less the monotonic clock);
    the set of the second either side, for the clocks' read apart."""
    boot = time.time() - time.monotonic()
    return {time.strftime("%H:%M:%S", time.gmtime(boot + stamp_s + d)) for d in (-1, 0, 1)}


def xid_line(bus, code, text, stamp="100.000000"):
    """A dmesg line for Xid `code` on the GPU at NVML bus id `bus`."""
    short = bus[4:].rsplit(".", 1)[0]  # 00000000:9A:00.0 -> 0000:9A:00
    return f"[{stamp}] NVRM: Xid (PCI:{short}): {code}, pid='<unknown>', name=<unknown>, {text}\n"


class CheckBase(E2E):
    def setUp(self):
        super().setUp()
        if not os.path.exists(TRACEGEN):
            self.fail(f"{TRACEGEN} not built")
        out = os.path.join(self.tmp.name, "idle.jsonl")
        subprocess.run([TRACEGEN, "--scenario", "idle-gpu", "--gpus", "8", "--duration", "3s",
                        "-o", out, "-q"], check=True, timeout=60)
        with open(out) as f:
            lines = [json.loads(l) for l in f if l.strip()]
        self.header, self.samples = lines[0], lines[1:2]
        self.kmsg = os.path.join(self.tmp.name, "kern.log")
        open(self.kmsg, "w").close()
        self.dev = os.path.join(self.tmp.name, "dev")
        os.mkdir(self.dev)
        for name in [f"nvidia{i}" for i in range(8)] + ["nvidiactl", "nvidia-uvm"]:
            open(os.path.join(self.dev, name), "w").close()

    def scenario(self):
        return write_scenario(self.header, self.samples, self.tmp.name)

    def add_process(self, gpu, pid, used):
        g = self.samples[0]["gpus"][gpu]
        g["processes"] = g.get("processes") or []
        g["processes"].append({"pid": pid, "used_bytes": used, "type": "compute"})
        g["mem_used_bytes"] = g["mem_used_bytes"] + used

    def check(self, *args, timeout=30, env=None, deadline=None):
        e = dict(os.environ, FAKE_NVML_SCENARIO=self.scenario())
        e.update(env or {})
        glob = ["--nvml-lib", FAKE_NVML, "--kmsg", self.kmsg, "--dev-prefix", self.dev]
        if deadline:
            glob += ["--deadline", deadline]
        return subprocess.run([GPUDOCTOR] + glob + ["check"] + list(args), env=e,
                              capture_output=True, text=True, timeout=timeout)

    def spawn(self, code, *args):
        p = subprocess.Popen([sys.executable, "-c", code] + list(args), stdout=subprocess.PIPE,
                             text=True)
        self.children.append(p)
        return int(p.stdout.readline().split(",")[0])


class Check(CheckBase):
    def test_healthy_idle_node_exits_0(self):
        p = self.check()
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("gpudoctor check: healthy (exit 0)", p.stdout)
        self.assertEqual(self.check("--reason").stdout, "")
        j = json.loads(self.check("--json").stdout)
        self.assertTrue(j["healthy"])
        self.assertEqual(j["findings"], [])
        self.assertEqual(j["gpus"], list(range(8)))
        self.assertIn("gpu-not-clean", j["checked"])

    def test_xid_79_on_gpu_5_is_unhealthy_and_named(self):
        bus = self.header["gpus"][5]["pci_bus_id"]
        with open(self.kmsg, "w") as f:
            f.write(xid_line(bus, 79, "GPU has fallen off the bus."))
        p = self.check("--json")
        self.assertEqual(p.returncode, 2, p.stderr)
        j = json.loads(p.stdout)
        self.assertFalse(j["healthy"])
        xids = [f for f in j["findings"] if f["id"] == "xid-error"]
        self.assertEqual([f["gpus"] for f in xids], [[5]])
        self.assertEqual(xids[0]["severity"], "critical")
        r = self.check("--reason")
        self.assertEqual(r.returncode, 2)
        line = r.stdout
        self.assertTrue(line.endswith("\n") and line.count("\n") == 1, repr(line))
        self.assertLessEqual(len(line.rstrip("\n")), 200)
        self.assertTrue(line.startswith(f"gpudoctor: GPU 5 {bus} "), line)
        self.assertIn("Xid 79", line)
        self.assertIn("fell off the bus", line)
        # When the kernel logged it: the line's stamp (100 s after boot).
        self.assertIn(reason_time(line), logged_hms(100), line)
        # The same time on every surface: the evidence and the finding's
        # start say when the kernel logged it, not when check read it.
        boot = time.time() - time.monotonic()
        for f in [f for f in j["findings"] if f["id"] in ("xid-error", "gpu-lost")]:
            self.assertAlmostEqual(f["start"], boot + 100, delta=2, msg=f["id"])
            self.assertIn(" " + reason_time(line) + " UTC", f["evidence"], f["id"])

    def test_since_leaves_out_older_lines(self):
        bus = self.header["gpus"][5]["pci_bus_id"]
        with open(self.kmsg, "w") as f:  # 1 s after boot: before a minute ago
            f.write(xid_line(bus, 79, "GPU has fallen off the bus.", stamp="1.000000"))
        self.assertEqual(self.check("--since", "1m").returncode, 0)
        self.assertEqual(self.check("--since", "0").returncode, 2)

    def test_application_xid_is_a_warning(self):
        bus = self.header["gpus"][2]["pci_bus_id"]
        with open(self.kmsg, "w") as f:
            f.write(xid_line(bus, 13, "Graphics SM Warp Exception"))
        p = self.check()
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)

    def test_dead_jobs_memory_is_unhealthy_and_named(self):
        gone = unused_pid()
        self.add_process(3, gone, 40 * GiB)
        p = self.check("--json")
        self.assertEqual(p.returncode, 2, p.stderr)
        j = json.loads(p.stdout)
        dirty = [f for f in j["findings"] if f["id"] == "gpu-not-clean"]
        self.assertEqual([f["gpus"] for f in dirty], [[3]])
        self.assertEqual(dirty[0]["pids"], [gone])
        self.assertIn("gone", dirty[0]["evidence"])
        r = self.check("--reason").stdout
        self.assertIn("GPU 3 ", r)
        self.assertIn(f"pid {gone} gone", r)
        self.assertIn("40.0 GiB", r)

    def test_only_clean_gpus_asked_for_exits_0(self):
        self.add_process(3, unused_pid(), 40 * GiB)
        self.assertEqual(self.check("--gpus", "0,1").returncode, 0)
        uuid = self.header["gpus"][1]["uuid"]
        self.assertEqual(self.check("--gpus", uuid).returncode, 0)
        self.assertEqual(self.check("--gpus", "1,3").returncode, 2)

    def test_gpu_asked_for_that_nvml_lacks_is_missing(self):
        p = self.check("--gpus", "9", "--json")
        self.assertEqual(p.returncode, 2)
        ids = [f["id"] for f in json.loads(p.stdout)["findings"]]
        self.assertEqual(ids, ["gpu-missing"])

    def test_live_process_listed_by_nvml_is_named_with_its_user(self):
        pid = self.spawn(TRAINER.format(workers=0))
        self.add_process(6, pid, 8 * GiB)
        p = self.check("--reason")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("GPU 6 ", p.stdout)
        self.assertIn(f"pid {pid} (python", p.stdout)
        self.assertIn(f", {ME})", p.stdout)

    def test_holder_of_device_files_is_named_with_its_user(self):
        d = self.dev
        pid = self.spawn(HOLDER, f"{d}/nvidia4", f"{d}/nvidiactl", f"{d}/nvidia-uvm")
        p = self.check("--json")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        dirty = [f for f in json.loads(p.stdout)["findings"] if f["id"] == "gpu-not-clean"]
        self.assertEqual([(f["gpus"], f["pids"]) for f in dirty], [([4], [pid])])
        self.assertIn(f"pid {pid} (python", dirty[0]["evidence"])
        self.assertIn(f"{ME}) holds /dev/nvidia4", dirty[0]["evidence"])
        # Not a GPU the job gets: clean.
        self.assertEqual(self.check("--gpus", "0,5").returncode, 0)

    def test_nvml_client_holding_device_files_does_not_count(self):
        # nvidia-smi, persistenced: per-GPU nodes and nvidiactl, no nvidia-uvm.
        d = self.dev
        self.spawn(HOLDER, *[f"{d}/nvidia{i}" for i in range(8)], f"{d}/nvidiactl")
        p = self.check()
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_hung_nvml_call_is_bounded_and_named(self):
        self.header["faults"] = [{"function": "nvmlDeviceGetUtilizationRates", "gpu": 4,
                                  "hang_s": 60}]
        p = self.check("--reason", deadline="500ms", timeout=20)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("gpudoctor: GPU 4 ", p.stdout)
        self.assertIn("did not answer within 0.5s", p.stdout)

    def test_warnings_only_exit_1(self):
        self.header["gpus"][7]["persistence_mode"] = False
        p = self.check("--json")
        self.assertEqual(p.returncode, 1, p.stderr)
        ids = [(f["id"], f["severity"]) for f in json.loads(p.stdout)["findings"]]
        self.assertEqual(ids, [("persistence-mode-off", "warning")])

    def test_nvml_that_cannot_start_is_could_not_check(self):
        p = subprocess.run([GPUDOCTOR, "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--kmsg",
                            "none", "check"], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("could not check", p.stderr)

    def test_usage_errors_exit_64_with_one_line(self):
        for args in (["--gpus", "x1"], ["--gpus", "0,"], ["--since", "yesterday"],
                     ["--json", "--reason"], ["--frobnicate"]):
            p = self.check(*args)
            self.assertEqual(p.returncode, 64, (args, p.stderr))
            self.assertEqual(p.stdout, "")
            self.assertEqual(p.stderr.count("\n"), 1, (args, p.stderr))
            self.assertTrue(p.stderr.startswith("gpudoctor: "), p.stderr)


class NodeProblemDetector(CheckBase):
    """deploy/kubernetes/node-problem-detector/gpudoctor-check.json's rules
    run as node-problem-detector's custom plugin monitor runs them: the
    rule's args, stdout read up to 4 KiB, trimmed and cut at
    max_output_length; exit 0 OK, 1 a problem (the condition is True), any
    other code Unknown."""

    OK, PROBLEM, UNKNOWN = 0, 1, 2

    def setUp(self):
        super().setUp()
        with open(NPD_CONFIG) as f:
            self.config = json.load(f)
        self.rules = {r["condition"]: r for r in self.config["rules"]}
        self.max = self.config["pluginConfig"]["max_output_length"]

    def run_rule(self, condition, nvml=FAKE_NVML, kmsg=None):
        rule = self.rules[condition]
        e = dict(os.environ, FAKE_NVML_SCENARIO=self.scenario())
        glob = ["--nvml-lib", nvml, "--kmsg", kmsg or self.kmsg, "--dev-prefix", self.dev]
        p = subprocess.run([GPUDOCTOR] + glob + rule["args"], env=e, capture_output=True,
                           timeout=30)
        raw = p.stdout[:4096].decode().strip()
        # The whole line fits: node-problem-detector's cut never bites.
        self.assertLessEqual(len(raw), self.max, raw)
        self.assertEqual(raw.count("\n"), 0, raw)
        self.assertTrue(raw.isascii() and raw.isprintable(), raw)
        status = {0: self.OK, 1: self.PROBLEM}.get(p.returncode, self.UNKNOWN)
        return status, raw[:self.max]

    def test_config_is_one_node_problem_detector_accepts(self):
        c = self.config
        self.assertEqual(c["plugin"], "custom")
        defaults = {d["type"] for d in c["conditions"]}
        self.assertEqual(set(self.rules), {"GPUUnhealthy", "GPUDegraded"})
        seconds = lambda d: int(d.rstrip("s"))  # noqa: E731
        for r in c["rules"]:
            self.assertEqual(r["type"], "permanent")
            self.assertIn(r["condition"], defaults)
            self.assertLessEqual(seconds(r["timeout"]), seconds(c["pluginConfig"]["timeout"]))
            self.assertEqual(r["args"][:2], ["check", "--npd"])

    def test_healthy_node_is_ok_on_both_conditions(self):
        for condition in self.rules:
            self.assertEqual(self.run_rule(condition), (self.OK, "gpudoctor: 8 GPUs healthy"))

    def test_gpus_busy_with_pods_are_not_a_problem(self):
        # A job's processes on GPU 6 and a device-file holder on GPU 4: the
        # prolog gate would refuse these GPUs; a node's health is not hurt.
        pid = self.spawn(TRAINER.format(workers=0))
        self.add_process(6, pid, 8 * GiB)
        d = self.dev
        self.spawn(HOLDER, f"{d}/nvidia4", f"{d}/nvidiactl", f"{d}/nvidia-uvm")
        for condition in self.rules:
            self.assertEqual(self.run_rule(condition)[0], self.OK, condition)
        self.assertEqual(self.check("--reason").returncode, 2)  # the gate still would

    def test_xid_79_sets_both_conditions_with_the_gpu_and_time(self):
        bus = self.header["gpus"][5]["pci_bus_id"]
        with open(self.kmsg, "w") as f:
            f.write(xid_line(bus, 79, "GPU has fallen off the bus."))
        for condition in self.rules:
            status, message = self.run_rule(condition)
            self.assertEqual(status, self.PROBLEM, condition)
            self.assertTrue(message.startswith(f"gpudoctor: GPU 5 {bus} "), message)
            self.assertIn("Xid 79", message)
            self.assertIn(reason_time(message), logged_hms(100), message)

    def test_warnings_only_degrade_without_making_unhealthy(self):
        self.header["gpus"][7]["persistence_mode"] = False
        status, message = self.run_rule("GPUUnhealthy")
        self.assertEqual(status, self.OK)
        self.assertTrue(message.startswith("gpudoctor: OK; warning: GPU 7 "), message)
        status, message = self.run_rule("GPUDegraded")
        self.assertEqual(status, self.PROBLEM)
        self.assertTrue(message.startswith("gpudoctor: GPU 7 "), message)

    def test_no_driver_is_unknown_with_why(self):
        for condition in self.rules:
            status, message = self.run_rule(condition, nvml="/nonexistent/libnvidia-ml.so.1")
            self.assertEqual(status, self.UNKNOWN, condition)
            self.assertTrue(message.startswith("gpudoctor: could not check: NVML did not start"),
                            message)

    def test_many_findings_fit_a_smaller_limit_keeping_time_and_count(self):
        lines = [xid_line(g["pci_bus_id"], 79, "GPU has fallen off the bus.")
                 for g in self.header["gpus"][:3]]
        with open(self.kmsg, "w") as f:
            f.writelines(lines)
        p = self.check("--npd", "--max-length", "48")
        line = p.stdout.rstrip("\n")
        self.assertEqual(p.returncode, self.PROBLEM, p.stderr)
        self.assertLessEqual(len(line), 48, line)
        self.assertRegex(line, r"^gpudoctor: GPU 0 .*\.\.\. \d\d:\d\d:\d\d; \+\d+ more$")

    def test_usage_errors(self):
        for args in (["--npd", "--json"], ["--npd", "--reason"], ["--npd-problem", "warning"],
                     ["--npd", "--npd-problem", "info"], ["--npd", "--max-length", "10"],
                     ["--max-length", "80"], ["--gpus", "none,0"]):
            p = self.check(*args)
            self.assertEqual(p.returncode, 64, (args, p.stderr))
            self.assertEqual(p.stderr.count("\n"), 1, (args, p.stderr))

    def test_gpus_none_judges_the_node_in_the_gate_too(self):
        self.add_process(3, unused_pid(), 40 * GiB)
        j = json.loads(self.check("--gpus", "none", "--json").stdout)
        self.assertEqual((j["healthy"], j["gpus"], j["node_only"]), (True, [], True))
        self.assertNotIn("gpu-not-clean", j["checked"])
        self.assertIn("the node's health only", self.check("--gpus", "none").stdout)


RECORDER = """#!/bin/sh
printf '%s\\n' "$*" >> {out}
"""


class PrologRunner(CheckBase):
    """deploy/slurm/prolog.sh with the real gpudoctor on the fake NVML and a
    fake scontrol (and logger) that record their arguments."""

    def prolog(self, env):
        t = self.tmp.name
        wrapper = os.path.join(t, "gpudoctor")
        with open(wrapper, "w") as f:
            f.write(f"#!/bin/sh\nexec {GPUDOCTOR} --nvml-lib {FAKE_NVML} --kmsg {self.kmsg} "
                    f"--dev-prefix {self.dev} \"$@\"\n")
        self.calls, self.logs = os.path.join(t, "scontrol.calls"), os.path.join(t, "log.lines")
        for name, out in (("scontrol", self.calls), ("logger", self.logs)):
            with open(os.path.join(t, name), "w") as f:
                f.write(RECORDER.format(out=out))
        for name in ("gpudoctor", "scontrol", "logger"):
            os.chmod(os.path.join(t, name), 0o755)
        e = {"PATH": os.environ["PATH"], "FAKE_NVML_SCENARIO": self.scenario(),
             "GPUDOCTOR": wrapper, "SCONTROL": os.path.join(t, "scontrol"),
             "GPUDOCTOR_LOGGER": os.path.join(t, "logger"), "SLURM_JOB_ID": "1234",
             "SLURMD_NODENAME": "node7"}
        e.update(env)
        return subprocess.run(["sh", PROLOG], env=e, capture_output=True, text=True, timeout=60)

    def read(self, path):
        if not os.path.exists(path):
            return ""
        with open(path) as f:
            return f.read()


class Prolog(PrologRunner):
    def test_xid_79_drains_the_node_with_the_reason_and_fails(self):
        bus = self.header["gpus"][5]["pci_bus_id"]
        with open(self.kmsg, "w") as f:
            f.write(xid_line(bus, 79, "GPU has fallen off the bus."))
        p = self.prolog({"SLURM_JOB_GPUS": "0,1"})
        self.assertNotEqual(p.returncode, 0, p.stderr)
        calls = self.read(self.calls).splitlines()
        self.assertEqual(len(calls), 1, calls)
        self.assertTrue(calls[0].startswith("update nodename=node7 state=drain reason=gpudoctor: "
                                            f"GPU 5 {bus} Xid 79"), calls[0])
        self.assertIn("job=1234 gpus=0,1", self.read(self.logs))
        self.assertIn("action=drain node=node7", self.read(self.logs))

    def test_dead_jobs_memory_on_the_jobs_gpu_drains(self):
        gone = unused_pid()
        self.add_process(2, gone, 40 * GiB)
        p = self.prolog({"CUDA_VISIBLE_DEVICES": "2,3"})
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(f"pid {gone} gone", self.read(self.calls))

    def test_healthy_node_no_drain_exit_0(self):
        self.add_process(3, unused_pid(), 40 * GiB)  # not this job's GPU
        p = self.prolog({"SLURM_JOB_GPUS": "0,1"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.read(self.calls), "")
        self.assertIn("job=1234 gpus=0,1 finding=healthy action=none", self.read(self.logs))

    def test_warnings_are_logged_and_the_job_goes_on(self):
        self.header["gpus"][0]["persistence_mode"] = False
        p = self.prolog({"SLURM_JOB_GPUS": "0"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.read(self.calls), "")
        self.assertIn("persistence mode off", self.read(self.logs))
        self.assertIn("action=log", self.read(self.logs))



class PrologDeviceCgroup(PrologRunner):
    """The job's GPUs from its cgroup v1 device list when Slurm's
    environment names none: a real devices cgroup in Slurm's layout
    (devices/slurm_<node>/uid_0/job_J) that allows one GPU's device file,
    /dev/nvidia<minor>, where minor numbers are not the NVML indexes."""

    JOB = "5432109"  # an id no other test's job has

    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            self.fail("this test makes a devices cgroup: run it as root")
        for g in self.header["gpus"]:
            g["minor_number"] = (g["index"] + 3) % 8  # GPU 4 is /dev/nvidia7
        root = "/sys/fs/cgroup/devices"
        if not os.path.isdir(root):
            self.fail("no cgroup v1 devices hierarchy at /sys/fs/cgroup/devices")
        self.cgroups = []
        path = root
        for part in (f"slurm_gdcheck{os.getpid()}", "uid_0", f"job_{self.JOB}"):
            path = os.path.join(path, part)
            os.mkdir(path)
            self.cgroups.append(path)
        self.job_cgroup = path

    def tearDown(self):
        for d in reversed(self.cgroups):
            os.rmdir(d)
        super().tearDown()

    def allow_only(self, *rules):
        with open(os.path.join(self.job_cgroup, "devices.deny"), "w") as f:
            f.write("a")
        for rule in rules:
            with open(os.path.join(self.job_cgroup, "devices.allow"), "w") as f:
                f.write(rule)

    def test_the_listed_gpu_is_gated_by_its_minor_number(self):
        self.allow_only("c 1:3 rwm", "c 195:7 rwm", "c 195:255 rwm")  # null, GPU 4, nvidiactl
        listed = open(os.path.join(self.job_cgroup, "devices.list")).read().splitlines()
        self.assertIn("c 195:7 rwm", listed)
        gone = unused_pid()
        self.add_process(4, gone, 40 * GiB)
        self.add_process(1, unused_pid(), 40 * GiB)  # not the job's GPU
        p = self.prolog({"SLURM_JOB_ID": self.JOB})
        self.assertEqual(p.returncode, 1, p.stderr)
        calls = self.read(self.calls)
        self.assertIn("reason=gpudoctor: GPU 4 ", calls)
        self.assertIn(f"pid {gone} gone", calls)
        self.assertIn(f"job={self.JOB} gpus=/dev/nvidia7 finding=", self.read(self.logs))

    def test_a_clean_listed_gpu_passes_and_all_devices_means_every_gpu(self):
        self.allow_only("c 195:7 rwm")
        self.add_process(1, unused_pid(), 40 * GiB)  # GPU 1 is /dev/nvidia4
        p = self.prolog({"SLURM_JOB_ID": self.JOB})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.read(self.calls), "")
        # Every device allowed: the job may open every GPU, all are gated.
        with open(os.path.join(self.job_cgroup, "devices.allow"), "w") as f:
            f.write("a")
        p = self.prolog({"SLURM_JOB_ID": self.JOB})
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("reason=gpudoctor: GPU 1 ", self.read(self.calls))
        self.assertIn(f"job={self.JOB} gpus=all finding=", self.read(self.logs))


if __name__ == "__main__":
    unittest.main()
