"""gpudoctor against a real Slurm (tests/e2e/gd_slurm.py: munged, slurmctld
and slurmd as root with a private slurm.conf and fake GPUs)."""
import json
import os
import re
import sys
import tempfile
import time
import unittest

from gd_e2e import FAKE_NVML, GPUDOCTOR, unused_pid
from gd_slurm import SCONTROL, SlurmCluster, node_reason
from test_check import GiB, PROLOG, CheckBase, logged_hms, reason_time, xid_line
from test_serve import Serve, first_sample_scenario

# Xid 79 on the 4-GPU scenario's GPU 2 (00000000:47:00.0), as the driver logs it.
XID_79_GPU2 = ("NVRM: Xid (PCI:0000:47:00): 79, pid='<unknown>', name=<unknown>, "
               "GPU has fallen off the bus.\n")
XID_79_GPU1 = XID_79_GPU2.replace("47:00", "0f:00")
REASON_RE = (r"^gpudoctor: GPU 2 00000000:47:00\.0 Xid 79: the driver can no longer reach "
             r"the GPU over PCIe \(it fell off the bus\) \d\d:\d\d:\d\d$")


class SlurmCase(unittest.TestCase):
    """A test with a cluster started before it and stopped after it, even
    when it fails."""

    cluster_args = {}

    def setUp(self):
        self.slurm = SlurmCluster(**self.cluster_args)
        self.slurm.__enter__()
        self.addCleanup(self.slurm.stop)


class HealthyNode(SlurmCase):
    def test_jobs_run_and_see_their_gpus(self):
        job = self.slurm.sbatch("--gres=gpu:2", "--wrap",
                                "echo GPUS=$SLURM_JOB_GPUS CVD=$CUDA_VISIBLE_DEVICES")
        fields = self.slurm.wait_job(job, "COMPLETED")
        self.assertEqual(fields["ExitCode"], "0:0")
        self.assertEqual(fields["NodeList"], self.slurm.node)
        out = self.slurm.job_output(job)
        self.assertIn("GPUS=0,1", out)
        self.assertIn("CVD=0,1", out)
        # A second job after the first: the node went back to idle.
        job = self.slurm.sbatch("--wrap", "true")
        self.slurm.wait_job(job, "COMPLETED")

    def test_operator_drain_shows_in_show_node(self):
        s = self.slurm
        s.scontrol("update", f"nodename={s.node}", "state=drain",
                   "reason=operator: fan swap, ticket=42")
        fields = s.wait_node(lambda f: "DRAIN" in f.get("State", ""), "drained", timeout=30)
        self.assertEqual(node_reason(fields), "operator: fan swap, ticket=42")
        # A drained node runs no new job: it stays pending.
        job = s.sbatch("--wrap", "true")
        fields = s.wait_job(job, "PENDING")
        s.scontrol("update", f"nodename={s.node}", "state=resume")
        s.wait_job(job, "COMPLETED")

    def test_proctrack_cgroup_puts_each_job_in_its_cgroup(self):
        # The fixture's other mode, for tests that read a job's cgroup.
        with SlurmCluster(gpus=2, node="gdcg", proctrack="cgroup") as s:
            job = s.sbatch("--wrap", "cat /proc/self/cgroup")
            s.wait_job(job, "COMPLETED")
            self.assertRegex(s.job_output(job), rf"/slurm[^/]*/uid_0/job_{job}/step_batch\n")

    def test_prolog_and_epilog_get_the_jobs_gpus_and_the_script_env(self):
        # What the deploy/slurm scripts rely on: slurmd's own environment does
        # not reach them, the fixture's wrapper adds script_env.
        with tempfile.TemporaryDirectory() as tmp:
            script = os.path.join(tmp, "record.sh")
            with open(script, "w") as f:
                f.write("#!/bin/sh\n"
                        f"echo \"$SLURM_SCRIPT_CONTEXT $SLURM_JOB_ID $SLURM_JOB_GPUS "
                        f"$CUDA_VISIBLE_DEVICES $SLURMD_NODENAME $GPUDOCTOR\" >> {tmp}/seen\n")
            os.chmod(script, 0o755)
            with SlurmCluster(gpus=4, node="gdpe", prolog=script, epilog=script,
                              script_env={"GPUDOCTOR": "/opt/gd/bin/gpudoctor"}) as s:
                job = s.sbatch("--gres=gpu:2", "--wrap", "true")
                s.wait_job(job, "COMPLETED")
                deadline = time.time() + 30  # the epilog ends after the job
                while time.time() < deadline:
                    with open(os.path.join(tmp, "seen")) as f:
                        seen = f.read().splitlines()
                    if len(seen) == 2:
                        break
                    time.sleep(0.1)
            self.assertEqual(sorted(seen), [
                f"epilog_slurmd {job} 0,1 0,1 gdpe /opt/gd/bin/gpudoctor",
                f"prolog_slurmd {job} 0,1 0,1 gdpe /opt/gd/bin/gpudoctor"])

    def test_daemons_listen_on_loopback_only(self):
        # Checked by the fixture at start; asserted here so it is a test.
        from gd_slurm import LOOPBACK_HEX, listening_sockets
        listening = listening_sockets()
        for port in (self.slurm.ctld_port, self.slurm.slurmd_port):
            self.assertTrue(listening.get(port))
            self.assertLessEqual(listening[port], LOOPBACK_HEX)


class ServeDrain(SlurmCase):
    """serve --slurm-drain against the real Slurm: the fake NVML's 4 GPUs,
    an Xid 79 appended to the kernel log serve follows."""

    cluster_args = {"gpus": 4}

    def setUp(self):
        super().setUp()
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.kmsg = os.path.join(self.tmp.name, "kern.log")
        open(self.kmsg, "w").close()
        self.scenario, _, _ = first_sample_scenario(self.tmp.name)
        # Findings are re-evaluated every second over a 4 s window: an Xid
        # clears 4 s after it was logged.
        self.config = os.path.join(self.tmp.name, "serve.toml")
        with open(self.config, "w") as f:
            f.write("[alerting]\nwindow_s = 4\nevaluate_every_s = 1\n")
        self.serve = None

    def start_serve(self, *args):
        self.serve = Serve(self.scenario, ["--config", self.config, "--slurm-drain",
                                           "--slurm-node", self.slurm.node] + list(args),
                           tmp=self.tmp.name, kmsg=self.kmsg,
                           env={"SLURM_CONF": self.slurm.conf,
                                "GPUDOCTOR_SCONTROL": SCONTROL})
        self.addCleanup(self.serve.kill)
        self.serve.wait_log(r'msg="slurm drain is on')
        return self.serve

    def log_kernel(self, line):
        with open(self.kmsg, "a") as f:
            f.write(line)

    def drains(self, result):
        return self.serve.metrics().get(f'gpudoctor_slurm_drains_total{{result="{result}"}}', 0)

    def resumes(self, result):
        return self.serve.metrics().get(f'gpudoctor_slurm_resumes_total{{result="{result}"}}', 0)

    def wait_drained_by_serve(self):
        fields = self.slurm.wait_node(lambda f: "DRAIN" in f.get("State", ""),
                                      "drained by serve", timeout=60)
        self.assertRegex(node_reason(fields), REASON_RE)
        return fields

    def test_xid79_drains_once_and_not_again_within_the_period(self):
        s = self.start_serve("--slurm-drain-period", "1h")
        self.log_kernel(XID_79_GPU2)
        self.wait_drained_by_serve()
        s.wait_log(r'msg="slurm drain: drained" node=gdnode finding=xid-error '
                   r'reason="gpudoctor: GPU 2 ')
        s.wait_metrics(lambda m: m.get('gpudoctor_slurm_drains_total{result="drained"}') == 1)
        status, actions = s.get_json("/api/v1/slurm/actions")
        self.assertEqual(status, 200)
        self.assertEqual((actions["node"], actions["period_s"], actions["resume"]),
                         ("gdnode", 3600, False))
        self.assertEqual([(a["action"], a["result"]) for a in actions["actions"]],
                         [("drain", "drained")])
        self.assertRegex(actions["drained_by_gpudoctor"], REASON_RE)
        # The operator resumes the node; a second critical finding within
        # the period does not drain it again.
        self.slurm.scontrol("update", f"nodename={self.slurm.node}", "state=resume")
        self.slurm.wait_node(lambda f: "DRAIN" not in f.get("State", ""), "resumed")
        self.log_kernel(XID_79_GPU1)
        s.wait_metrics(lambda m: m.get('gpudoctor_slurm_drains_total{result="rate_limited"}') == 1,
                       timeout=30)
        s.wait_log(r'msg="slurm drain: rate_limited"')
        fields = self.slurm.show_node()
        self.assertNotIn("DRAIN", fields["State"])
        self.assertEqual(self.drains("drained"), 1)
        # Jobs run on it again.
        job = self.slurm.sbatch("--wrap", "true")
        self.slurm.wait_job(job, "COMPLETED")

    def test_a_node_drained_by_an_operator_is_left_alone(self):
        self.slurm.scontrol("update", f"nodename={self.slurm.node}", "state=drain",
                            "reason=operator: RMA 1234, keep drained")
        s = self.start_serve("--slurm-resume")
        self.log_kernel(XID_79_GPU2)
        s.wait_metrics(
            lambda m: m.get('gpudoctor_slurm_drains_total{result="already_unavailable"}') == 1,
            timeout=30)
        fields = self.slurm.show_node()
        self.assertEqual(node_reason(fields), "operator: RMA 1234, keep drained")
        self.assertIn("DRAIN", fields["State"])
        self.assertEqual(self.drains("drained"), 0)
        # The finding clears (the 4 s window passes): the operator's drain
        # is not resumed, even with --slurm-resume.
        s.wait_log(r'msg="alert resolved" id=xid-error', timeout=30)
        fields = self.slurm.show_node()
        self.assertEqual(node_reason(fields), "operator: RMA 1234, keep drained")
        self.assertEqual(self.resumes("resumed"), 0)

    def test_with_the_opt_in_a_cleared_finding_resumes_the_node(self):
        s = self.start_serve("--slurm-resume")
        self.log_kernel(XID_79_GPU2)
        self.wait_drained_by_serve()
        self.slurm.wait_node(lambda f: "DRAIN" not in f.get("State", ""), "resumed by serve",
                             timeout=60)
        s.wait_metrics(lambda m: m.get('gpudoctor_slurm_resumes_total{result="resumed"}') == 1)
        s.wait_log(r'msg="slurm resume: resumed" node=gdnode')
        job = self.slurm.sbatch("--wrap", "true")
        self.slurm.wait_job(job, "COMPLETED")

    def test_without_the_opt_in_the_node_stays_drained(self):
        s = self.start_serve()
        self.log_kernel(XID_79_GPU2)
        self.wait_drained_by_serve()
        # The finding clears: serve says it does not resume, and does not.
        s.wait_metrics(lambda m: m.get('gpudoctor_slurm_resumes_total{result="not_enabled"}') == 1,
                       timeout=60)
        fields = self.slurm.show_node()
        self.assertIn("DRAIN", fields["State"])
        self.assertRegex(node_reason(fields), REASON_RE)
        self.assertEqual(self.resumes("resumed"), 0)


class PrologGate(CheckBase):
    """deploy/slurm/prolog.sh as the real slurmd's Prolog=, with the build's
    gpudoctor on tracegen's idle 8-GPU node (the fake NVML) and the node's 8
    GPUs as gres. The prolog's decisions go through $GPUDOCTOR_LOGGER to a
    file (no syslog needed), each line stamped with the time it was written;
    the gpudoctor wrapper stamps when the check began."""

    def start_cluster(self):
        t = self.tmp.name
        self.times = os.path.join(t, "check.started")
        self.logs = os.path.join(t, "prolog.log")
        gpudoctor = os.path.join(t, "gpudoctor")
        with open(gpudoctor, "w") as f:
            # slurmd gives the prolog no PATH: sh's default one finds date.
            f.write("#!/bin/sh\n"
                    f"date +%s.%N >> {self.times}\n"
                    f"exec {GPUDOCTOR} --nvml-lib {FAKE_NVML} --kmsg {self.kmsg} "
                    f"--dev-prefix {self.dev} \"$@\"\n")
        logger = os.path.join(t, "logger")
        with open(logger, "w") as f:
            f.write("#!/bin/sh\n"
                    f"printf '%s %s\\n' \"$(date +%s.%N)\" \"$*\" >> {self.logs}\n")
        os.chmod(gpudoctor, 0o755)
        os.chmod(logger, 0o755)
        self.slurm = SlurmCluster(gpus=8, prolog=os.path.abspath(PROLOG), script_env={
            "GPUDOCTOR": gpudoctor, "GPUDOCTOR_LOGGER": logger, "SCONTROL": SCONTROL,
            "FAKE_NVML_SCENARIO": self.scenario()})
        self.slurm.__enter__()
        return self.slurm

    def tearDown(self):
        # The cluster first: its prolog reads files in the test's folder.
        if getattr(self, "slurm", None):
            self.slurm.stop()
        super().tearDown()

    def log_lines(self):
        if not os.path.exists(self.logs):
            return []
        with open(self.logs) as f:
            return f.read().splitlines()

    def wait_log(self, needle, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            found = [l for l in self.log_lines() if needle in l]
            if found:
                return found[0]
            time.sleep(0.05)
        self.fail(f"no prolog log line with {needle!r} in {timeout} s: {self.log_lines()}\n"
                  + self.slurm.daemon_logs())

    def wait_drained(self):
        return self.slurm.wait_node(lambda f: "DRAIN" in f.get("State", ""),
                                    "drained by the prolog", timeout=120)

    def assert_requeued_not_run(self, job):
        """The job's prolog failed: Slurm requeued it (Restarts=1), it waits
        (the only node is drained) and its batch script never ran."""
        fields = self.slurm.wait_job(job, "PENDING", timeout=60)
        self.assertEqual(fields.get("Restarts"), "1", fields)
        out = os.path.join(self.slurm.dir, "log", f"job-{job}.out")
        self.assertFalse(os.path.exists(out), self.slurm.job_output(job))
        return fields

    def show(self, fields):
        print(f"scontrol show node: State={fields.get('State')} Reason={fields.get('Reason')}",
              file=sys.stderr)
        for line in self.log_lines():
            print(f"prolog log: {line}", file=sys.stderr)

    def test_healthy_node_jobs_run_and_complete(self):
        s = self.start_cluster()
        for n, gpus in ((1, "0"), (2, "0,1"), (8, "0,1,2,3,4,5,6,7")):
            job = s.sbatch(f"--gres=gpu:{n}", "--wrap", "echo GPUS=$SLURM_JOB_GPUS")
            fields = s.wait_job(job, "COMPLETED", timeout=120)
            self.assertEqual((fields["ExitCode"], fields["NodeList"]), ("0:0", s.node))
            self.assertIn(f"GPUS={gpus}\n", s.job_output(job))
            self.wait_log(f"job={job} gpus={gpus} finding=healthy action=none")
        self.assertNotIn("DRAIN", s.show_node()["State"])
        # The prolog's own time: the check's start to its decision's log
        # line (gpudoctor check, then logger), printed, never asserted.
        with open(self.times) as f:
            starts = [float(l) for l in f.read().split()]
        ends = [float(l.split()[0]) for l in self.log_lines()]
        self.assertEqual(len(starts), 3)
        self.assertEqual(len(ends), 3)
        for (n, start, end) in zip((1, 2, 8), starts, ends):
            ms = 1000 * (end - start)
            print(f"prolog on {n} GPU(s) of 8: check start to log line {ms:.0f} ms",
                  file=sys.stderr)
        self.show(s.show_node())

    def test_xid_79_on_gpu_5_drains_and_the_job_does_not_run(self):
        bus = self.header["gpus"][5]["pci_bus_id"]
        with open(self.kmsg, "w") as f:
            f.write(xid_line(bus, 79, "GPU has fallen off the bus."))
        s = self.start_cluster()
        job = s.sbatch("--gres=gpu:2", "--wrap", "echo ran")
        fields = self.wait_drained()
        reason = node_reason(fields)
        self.assertTrue(reason.startswith(f"gpudoctor: GPU 5 {bus} Xid 79"), reason)
        self.assertIn("fell off the bus", reason)
        self.assertIn(reason_time(reason), logged_hms(100), reason)  # the Xid's time
        self.assertLessEqual(len(reason), 200)
        line = self.wait_log(f"job={job} gpus=0,1 finding=\"{reason}\" action=drain node={s.node}")
        self.assertIn("-p user.err", line)
        self.assert_requeued_not_run(job)
        self.show(s.show_node())
        # check --json on the same scenario and kernel log: the finding, exit 2.
        p = self.check("--json")
        self.assertEqual(p.returncode, 2, p.stderr)
        xids = [f for f in json.loads(p.stdout)["findings"] if f["id"] == "xid-error"]
        self.assertEqual([(f["gpus"], f["severity"]) for f in xids], [([5], "critical")])

    def test_dead_jobs_memory_on_the_jobs_gpu_drains_naming_the_holder(self):
        gone = unused_pid()
        self.add_process(1, gone, 40 * GiB)
        s = self.start_cluster()
        job = s.sbatch("--gres=gpu:2", "--wrap", "echo ran")
        reason = node_reason(self.wait_drained())
        self.assertTrue(reason.startswith("gpudoctor: GPU 1 "), reason)
        self.assertIn(f"pid {gone} gone", reason)
        self.assertIn("40.0 GiB", reason)
        self.wait_log(f"job={job} gpus=0,1 finding=\"{reason}\" action=drain node={s.node}")
        self.assert_requeued_not_run(job)
        self.show(s.show_node())


class DrainFlags(unittest.TestCase):
    def test_bad_drain_flags_are_one_line_usage_errors(self):
        from gd_e2e import run
        for args, message in [
                (["--slurm-resume"], "--slurm-resume requires --slurm-drain"),
                (["--slurm-drain", "--slurm-drain-period", "0s"],
                 "--slurm-drain-period: '0s' is out of range 1s..31d"),
                (["--slurm-drain", "--slurm-node", "a b"],
                 "--slurm-node: 'a b': letters, digits, '-', '_' and '.' only")]:
            p = run(["serve", "--no-db"] + args)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(p.stderr.strip().splitlines(),
                             [f"gpudoctor: {message} (see --help)"])

    def test_without_slurm_drain_the_api_says_it_is_off(self):
        from test_serve import Serve, first_sample_scenario
        with tempfile.TemporaryDirectory() as tmp:
            scenario, _, _ = first_sample_scenario(tmp)
            s = Serve(scenario, tmp=tmp)
            try:
                self.assertEqual(s.get_json("/api/v1/slurm/actions"), (200, {"enabled": False}))
                self.assertFalse([k for k in s.metrics() if k.startswith("gpudoctor_slurm")])
            finally:
                s.kill()


if __name__ == "__main__":
    unittest.main()
