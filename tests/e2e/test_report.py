"""report, end to end: a trace with two jobs sharing one GPU, a Slurm job
alone on another that ends inside the window, and a GPU nobody holds;
`gpudoctor report --from` as text, --json and --csv, checked against what
the trace's own numbers say each job should be given."""
import csv
import io
import json
import os
import subprocess
import tempfile
import unittest

from gd_e2e import GPUDOCTOR, load_scenario, scenario_4gpu, write_scenario

GIB = 1 << 30
T0 = 1732262400.0
SECONDS = 600          # samples at T0 + 0 .. T0 + SECONDS, 1 s apart
WATTS = [300.0, 100.0, 50.0]
C_ENDS = 300           # the Slurm job holds GPU 1 for samples i < C_ENDS
SM_A, SM_B = 30.0, 10.0
HOSTILE = "evil\x1b[2J\x1b]0;pwned\x07"


def _tool(*relative):
    """A build output next to gpudoctor's (build/src/cli/gpudoctor)."""
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(GPUDOCTOR))))
    return os.path.join(build, *relative)


STORE_FILL = os.environ.get("GD_STORE_FILL") or _tool("tests", "store", "gd_store_fill")
TRACEGEN = os.environ.get("GD_TRACEGEN") or _tool("tools", "tracegen", "gpudoctor-tracegen")


def gd(*args, timeout=120):
    return subprocess.run([GPUDOCTOR] + list(args), capture_output=True, text=True,
                          timeout=timeout)


def proc(pid, ppid, name, user, cgroup=None):
    p = {"pid": pid, "ppid": ppid, "user": user, "name": name,
         "cmdline": name + " train.py", "state": "S", "start_time": T0 - 60}
    if cgroup:
        p["cgroup"] = cgroup
    return p


def build_trace(directory):
    header, _ = load_scenario(scenario_4gpu())
    header["gpus"] = header["gpus"][:3]
    samples, counters = [], [7e9, 3e9, 1e9]
    for i in range(SECONDS + 1):
        gpus = []
        for g in range(3):
            counters[g] += WATTS[g] * 1000
            procs = []
            if g == 0:
                procs = [{"pid": 1001, "used_bytes": 20 * GIB, "sm_util_pct": SM_A},
                         {"pid": 2000, "used_bytes": 20 * GIB, "sm_util_pct": SM_B}]
            if g == 1 and i < C_ENDS:
                procs = [{"pid": 3000, "used_bytes": 40 * GIB, "sm_util_pct": 90.0}]
            gpus.append({"index": g, "util_pct": 80.0 if procs else 0.0,
                         "power_w": WATTS[g], "energy_mj_total": int(counters[g]),
                         "processes": procs})
        processes = [proc(1000, 1, "torchrun", "alice"), proc(1001, 1000, "python", "alice"),
                     proc(50, 1, "bash", "bob"), proc(2000, 50, HOSTILE, "bob")]
        if i < C_ENDS:
            processes.append(proc(3000, 1, "python", "carol",
                                  "/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0"))
        samples.append({"t": T0 + i, "gpus": gpus, "host": {}, "processes": processes})
    return write_scenario(header, samples, directory)


# What the trace says, interval by interval: the interval ending at sample i
# has sample i's holders; 1 s each.
HELD_C = sum(1 for i in range(1, SECONDS + 1) if i < C_ENDS)
KWH = 3.6e6
ENERGY_A = WATTS[0] * SECONDS * SM_A / (SM_A + SM_B) / KWH
ENERGY_B = WATTS[0] * SECONDS * SM_B / (SM_A + SM_B) / KWH
ENERGY_C = WATTS[1] * HELD_C / KWH
IDLE = (WATTS[1] * (SECONDS - HELD_C) + WATTS[2] * SECONDS) / KWH
TOTAL = sum(WATTS) * SECONDS / KWH


class ReportFromTrace(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.trace = build_trace(cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def report(self, *args):
        p = gd("report", "--from", self.trace, *args)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def jobs(self, doc):
        return {g["label"]: g for g in doc["groups"]}

    def test_json_gpu_hours_energy_split_and_closing_sums(self):
        doc = json.loads(self.report("--json"))
        node = doc["node"]
        self.assertAlmostEqual(node["gpu_hours_available"], 3 * SECONDS / 3600, places=6)
        self.assertEqual(doc["window"]["samples"], SECONDS + 1)
        jobs = self.jobs(doc)
        a = jobs["torchrun train.py (pid 1000)"]
        c = jobs["slurm 4242"]
        b = [g for g in doc["groups"] if g["key"].startswith("pid:2000")][0]
        # Held time of a shared GPU splits by memory (equal here); energy by SM%.
        self.assertAlmostEqual(a["gpu_hours_held"], SECONDS / 2 / 3600, places=6)
        self.assertAlmostEqual(b["gpu_hours_held"], SECONDS / 2 / 3600, places=6)
        self.assertAlmostEqual(c["gpu_hours_held"], HELD_C / 3600, places=6)
        self.assertAlmostEqual(a["energy_kwh"], ENERGY_A, delta=0.01 * ENERGY_A)
        self.assertAlmostEqual(b["energy_kwh"], ENERGY_B, delta=0.01 * ENERGY_B)
        self.assertAlmostEqual(c["energy_kwh"], ENERGY_C, delta=0.01 * ENERGY_C)
        self.assertGreater(a["split"]["sm_gpu_hours"], 0)
        self.assertEqual(a["energy_method"]["power_kwh"], 0)
        self.assertIsNone(a["sm_active_gpu_hours"])  # no GPM in this trace
        self.assertAlmostEqual(a["mem_mean_pct"], 100 * 20 / 80, places=3)
        # Idle GPUs' energy goes to nobody, and everything closes.
        self.assertAlmostEqual(node["idle_energy_kwh"], IDLE, delta=0.01 * IDLE)
        groups = sum(g["energy_kwh"] for g in doc["groups"])
        self.assertAlmostEqual(groups + node["idle_energy_kwh"], TOTAL, delta=0.01 * TOTAL)
        self.assertAlmostEqual(node["energy_kwh"], TOTAL, delta=0.01 * TOTAL)
        held = sum(g["gpu_hours_held"] for g in doc["groups"])
        self.assertAlmostEqual(held + node["gpu_hours_unheld"] + node["gpu_hours_unattributed"],
                               node["gpu_hours_available"], places=6)
        for gpu in doc["gpus"]:
            self.assertAlmostEqual(gpu["gpu_hours_held"] + gpu["gpu_hours_unheld"]
                                   + gpu["gpu_hours_unattributed"], gpu["wall_hours"], places=6)

    def test_by_user_and_gpu_and_prices(self):
        doc = json.loads(self.report("--json", "--by", "user", "--price-kwh", "0.5",
                                     "--price-gpu-hour", "2"))
        users = self.jobs(doc)
        self.assertEqual(set(users), {"alice", "bob", "carol"})
        carol = users["carol"]
        self.assertAlmostEqual(carol["cost"], 0.5 * carol["energy_kwh"]
                               + 2 * carol["gpu_hours_held"], places=6)
        gpus = json.loads(self.report("--json", "--by", "gpu"))
        by_key = {g["key"]: g for g in gpus["groups"]}
        self.assertAlmostEqual(by_key["gpu:2"]["gpu_hours_held"], 0)
        self.assertAlmostEqual(by_key["gpu:0"]["gpu_hours_held"], SECONDS / 3600, places=6)

    def test_csv_matches_json(self):
        doc = json.loads(self.report("--json"))
        rows = list(csv.DictReader(io.StringIO(self.report("--csv"))))
        self.assertEqual(len(rows), len(doc["groups"]))
        for row, group in zip(rows, doc["groups"]):
            self.assertEqual(row["key"], group["key"])
            self.assertAlmostEqual(float(row["energy_kwh"]), group["energy_kwh"], places=5)
            self.assertAlmostEqual(float(row["gpu_hours_held"]), group["gpu_hours_held"],
                                   places=5)
        self.assertNotIn("\x1b", self.report("--csv"))

    def test_text_table_sorted_and_sanitised(self):
        out = self.report()
        self.assertNotIn("\x1b", out)
        self.assertNotIn("\x07", out)
        lines = out.splitlines()
        head = next(i for i, l in enumerate(lines) if l.startswith("JOB"))
        table = lines[head + 1:head + 4]
        self.assertIn("slurm 4242", table[2])  # held least, listed last
        self.assertTrue(any("\\e[2J" in l for l in table), table)
        node = next(l for l in lines if l.startswith("node:"))
        self.assertIn("3 GPUs", node)
        self.assertIn(f"{3 * SECONDS / 3600:.3f} GPU-h available", node)
        energy = next(l for l in lines if l.startswith("energy:"))
        self.assertIn(f"idle GPUs {IDLE:.3f}", energy)

    def test_bad_flags_and_input(self):
        cases = [(["report"], "--from, --db or --prometheus"),
                 (["report", "--from", self.trace, "--by", "team"], "--by"),
                 (["report", "--from", self.trace, "--price-kwh", "-1"], "--price-kwh"),
                 (["report", "--from", self.trace, "--json", "--csv"], "--csv"),
                 (["report", "--from", self.trace, "--since", "1h", "--start", "0"],
                  "--since"),
                 (["report", "--from", self.trace, "--start", "2000", "--end", "1000"],
                  "--until")]
        for args, word in cases:
            p = gd(*args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn(word, p.stderr)
        # A window the trace does not reach: said on stderr, an empty report.
        p = gd("report", "--from", self.trace, "--since", "1h", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("no samples in", p.stderr)
        self.assertEqual(json.loads(p.stdout)["groups"], [])
        # A file that is not there is a usage error, as for diagnose --from.
        p = gd("report", "--from", self.tmp.name + "/missing.jsonl")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("missing.jsonl", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)


class ReportFromHistory(unittest.TestCase):
    """The same trace stored the way `serve --db` keeps it: `report --db`
    gives every group the same figures as `report --from`."""

    def test_db_matches_trace(self):
        if not os.path.exists(STORE_FILL):
            self.fail(f"{STORE_FILL} not built")
        with tempfile.TemporaryDirectory() as tmp:
            trace = build_trace(tmp)
            db = os.path.join(tmp, "h.db")
            p = subprocess.run([STORE_FILL, "--db", db, "--trace", trace],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            want = json.loads(gd("report", "--from", trace, "--json").stdout)
            p = gd("report", "--db", db, "--since", "0", "--json")
            self.assertEqual(p.returncode, 0, p.stderr)
            got = json.loads(p.stdout)
            self.assertEqual(got["window"]["samples"], SECONDS + 1)
            self.assertEqual([g["key"] for g in got["groups"]],
                             [g["key"] for g in want["groups"]])
            for a, b in zip(got["groups"], want["groups"]):
                self.assertAlmostEqual(a["gpu_hours_held"], b["gpu_hours_held"], places=6)
                self.assertAlmostEqual(a["energy_kwh"], b["energy_kwh"],
                                       delta=0.01 * b["energy_kwh"])
            self.assertAlmostEqual(got["node"]["idle_energy_kwh"], IDLE, delta=0.01 * IDLE)
            # A window inside the history: half of it.
            p = gd("report", "--db", db, "--start", str(T0), "--end", str(T0 + SECONDS / 2),
                   "--json")
            self.assertEqual(p.returncode, 0, p.stderr)
            half = json.loads(p.stdout)
            self.assertAlmostEqual(half["node"]["gpu_hours_available"],
                                   3 * SECONDS / 2 / 3600, places=6)
            # The window flags of diagnose and export: a duration counts back
            # from --until (the last 2 minutes before the middle).
            p = gd("report", "--db", db, "--since", "2m", "--until", str(T0 + SECONDS / 2),
                   "--json")
            self.assertEqual(p.returncode, 0, p.stderr)
            two = json.loads(p.stdout)
            self.assertAlmostEqual(two["node"]["gpu_hours_available"], 3 * 120 / 3600, places=6)


class ReportFindings(unittest.TestCase):
    """--findings: the diagnosis of the same window, each finding given to
    the job whose processes it names, with the share of the job's time."""

    def test_findings_match_diagnose(self):
        if not os.path.exists(TRACEGEN):
            self.fail(f"{TRACEGEN} not built")
        with tempfile.TemporaryDirectory() as tmp:
            trace = os.path.join(tmp, "ib.jsonl")
            subprocess.run([TRACEGEN, "--scenario", "input-bound", "--gpus", "2",
                            "--duration", "20m", "--interval", "1s", "-q", "-o", trace],
                           check=True, timeout=120)
            p = gd("--kmsg", "none", "diagnose", "--from", trace, "--json")
            findings = [f for f in json.loads(p.stdout)["findings"] if f["pids"]]
            self.assertTrue(any(f["id"] == "input-bound" for f in findings), p.stdout)
            p = gd("report", "--from", trace, "--findings", "--json")
            self.assertEqual(p.returncode, 0, p.stderr)
            doc = json.loads(p.stdout)
            jobs = [g for g in doc["groups"] if not g["other"]]
            self.assertEqual(len(jobs), 1)
            job = jobs[0]
            got = {f["id"]: f for f in job["findings"]}
            for f in findings:
                self.assertIn(f["id"], got)
                span = job["last"] - job["first"]
                overlap = min(f["end"], job["last"]) - max(f["start"], job["first"])
                self.assertAlmostEqual(got[f["id"]]["share"], overlap / span, places=6)
            text = gd("report", "--from", trace, "--findings").stdout
            self.assertIn("input-bound", text.split("findings (share")[1])
            # Without the flag, no findings key: absent is not "none".
            doc = json.loads(gd("report", "--from", trace, "--json").stdout)
            self.assertNotIn("findings", doc["groups"][0])
            # The same window kept by serve --db: the same findings, the
            # same shares, from the history.
            if not os.path.exists(STORE_FILL):
                self.fail(f"{STORE_FILL} not built")
            db = os.path.join(tmp, "h.db")
            p = subprocess.run([STORE_FILL, "--db", db, "--trace", trace],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            p = gd("report", "--db", db, "--since", "0", "--findings", "--json")
            self.assertEqual(p.returncode, 0, p.stderr)
            from_db = [g for g in json.loads(p.stdout)["groups"] if not g["other"]]
            self.assertEqual(len(from_db), 1)
            self.assertEqual({f["id"]: round(f["share"], 6) for f in from_db[0]["findings"]},
                             {i: round(f["share"], 6) for i, f in got.items()})


if __name__ == "__main__":
    unittest.main()
