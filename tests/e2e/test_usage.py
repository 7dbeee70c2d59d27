"""The dashboard's Usage page and GET /api/v1/usage, end to end: serve on
the fake NVML over a history database that already holds ten minutes of a
node with known jobs (two sharing GPU 0, one named with HTML markup; a
Slurm job on GPU 1 that ends halfway; an idle job holding GPU 3), opened
in a real headless Chromium on that fixed window. What a user would check:
each job's row shows the GPU-hours and the energy that `gpudoctor report
--db ... --json --findings` gives for the same window (within the page's
rounding), both stacked charts are drawn with a series per job, the waste
is given by cause, and the markup name shows as text without running."""
import json
import os
import subprocess
import time
import unittest
import urllib.error
import urllib.request

from gd_e2e import GPUDOCTOR, load_scenario, scenario_4gpu, write_scenario
from test_export import STORE_FILL
from test_web import ServedPage

GIB = 1 << 30
SECONDS = 600
WATTS = [300.0, 100.0, 50.0, 80.0]
SM_A, SM_B = 30.0, 10.0
SLURM_ENDS = 300
HOSTILE = "<img src=x onerror=alert(1)>"
ARTIFACTS = os.environ.get("GD_ARTIFACTS") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(GPUDOCTOR)))), "artifacts")


# Kubernetes pods of the jobs (the history keeps each process's pod): the
# two jobs sharing GPU 0 in two pods of one namespace, the idle job in
# another; the Slurm job in none.
PODS = {1001: ("ml", "train-a"), 2000: ("ml", "notebook-b"), 4000: ("infer", "idler-0")}


def proc(pid, ppid, name, user, t0, cgroup=None):
    p = {"pid": pid, "ppid": ppid, "user": user, "name": name,
         "cmdline": name + " train.py --token=s3cret", "state": "S", "start_time": t0 - 60}
    if cgroup:
        p["cgroup"] = cgroup
    if pid in PODS:
        ns, name = PODS[pid]
        p["pod"] = {"uid": f"0b1c2d3e-0000-4000-8000-{pid:012d}", "namespace": ns,
                    "name": name, "container": "main", "deleted": False}
    return p


def build_trace(directory, t0):
    header, _ = load_scenario(scenario_4gpu())
    samples, counters = [], [7e9, 3e9, 1e9, 2e9]
    for i in range(SECONDS + 1):
        gpus = []
        for g in range(4):
            counters[g] += WATTS[g] * 1000
            procs, util = [], 0.0
            if g == 0:
                procs = [{"pid": 1001, "used_bytes": 20 * GIB, "sm_util_pct": SM_A},
                         {"pid": 2000, "used_bytes": 20 * GIB, "sm_util_pct": SM_B}]
                util = 80.0
            if g == 1 and i < SLURM_ENDS:
                procs, util = [{"pid": 3000, "used_bytes": 40 * GIB, "sm_util_pct": 90.0}], 80.0
            if g == 3:
                procs = [{"pid": 4000, "used_bytes": 8 * GIB}]
            gpus.append({"index": g, "util_pct": util, "power_w": WATTS[g],
                         "energy_mj_total": int(counters[g]), "processes": procs})
        processes = [proc(1000, 1, "torchrun", "alice", t0), proc(1001, 1000, "python", "alice", t0),
                     proc(50, 1, "bash", "bob", t0), proc(2000, 50, HOSTILE, "bob", t0),
                     proc(4000, 1, "idler", "dave", t0)]
        if i < SLURM_ENDS:
            processes.append(proc(3000, 1, "python", "carol", t0,
                                  "/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0"))
        samples.append({"t": t0 + i, "gpus": gpus, "host": {}, "processes": processes})
    return write_scenario(header, samples, directory)


def fetch(url):
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class UsagePage(ServedPage):
    def setUp(self):
        super().setUp()
        self.assertTrue(os.path.exists(STORE_FILL), f"{STORE_FILL} not built")
        self.t0 = float(int(time.time()) - 1800)
        self.t1 = self.t0 + SECONDS
        trace = build_trace(self.tmp.name, self.t0)
        self.db = os.path.join(self.tmp.name, "history.db")
        subprocess.run([STORE_FILL, "--db", self.db, "--trace", trace], check=True,
                       capture_output=True, timeout=120)
        self.open_dashboard(scenario_4gpu(), ["--db", self.db])

    def report(self):
        p = subprocess.run([GPUDOCTOR, "report", "--db", self.db, "--start", str(self.t0),
                            "--end", str(self.t1), "--json", "--findings"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_api_matches_report_and_refuses_bad_parameters(self):
        rep = self.report()
        status, body = fetch(f"{self.base}/api/v1/usage?since={self.t0}&until={self.t1}&buckets=12")
        self.assertEqual(status, 200, body)
        u = json.loads(body)
        self.assertEqual(u["by"], "job")
        self.assertEqual(u["window"]["samples"], rep["window"]["samples"])
        self.assertEqual(len(u["buckets"]), 12)
        jobs = {g["key"]: g for g in u["groups"]}
        want = [g for g in rep["groups"] if not g["other"]]
        self.assertEqual(len(want), 4, [g["label"] for g in want])
        self.assertEqual(set(jobs), {g["key"] for g in want})
        for g in want:
            got = jobs[g["key"]]
            self.assertEqual(got["label"], g["label"])
            self.assertAlmostEqual(got["gpu_hours_held"], g["gpu_hours_held"], places=9)
            self.assertAlmostEqual(got["energy_kwh"], g["energy_kwh"], places=9)
            self.assertAlmostEqual(got["idle_held_gpu_hours"], g["idle_held_gpu_hours"], places=9)
            self.assertAlmostEqual(sum(got["series"]["gpu_hours_held"]), g["gpu_hours_held"], places=9)
            self.assertAlmostEqual(sum(got["series"]["energy_kwh"]), g["energy_kwh"], places=9)
            self.assertEqual({w["id"]: round(w["share"], 6) for w in got["waste"]},
                             {f["id"]: round(f["share"], 6) for f in g["findings"]})
        # A job reads as its launcher's command line, secrets redacted.
        self.assertTrue(any(g["label"].startswith(HOSTILE) and g["label"].endswith("(pid 2000)")
                            for g in want), [g["label"] for g in want])
        self.assertFalse(any("s3cret" in g["label"] for g in u["groups"]))
        idler = [g for g in u["groups"] if g["label"].startswith("idler")][0]
        self.assertIn("gpu-idle-allocated", [w["id"] for w in idler["waste"]])
        for k in ("gpu_hours_available", "gpu_hours_held", "busy_gpu_hours", "idle_energy_kwh"):
            self.assertAlmostEqual(u["node"][k], rep["node"][k], places=9)
        # No command line (nor its token) in the reply.
        self.assertNotIn("s3cret", body)
        # top=1: the rest in "other", the totals unchanged.
        status, body = fetch(f"{self.base}/api/v1/usage?since={self.t0}&until={self.t1}&top=1")
        self.assertEqual(status, 200, body)
        groups = json.loads(body)["groups"]
        self.assertEqual(len(groups), 2)
        self.assertTrue(groups[1]["other"])
        self.assertEqual(groups[1]["groups"], 3)
        self.assertAlmostEqual(sum(g["gpu_hours_held"] for g in groups),
                               sum(g["gpu_hours_held"] for g in want), places=9)
        for query, why in (("buckets=0", "buckets"), ("top=99", "top"), ("by=gpu", "by"),
                           ("since=9d", "7 days"), ("since=1h&since=2h", "twice"),
                           (f"since={self.t1}&until={self.t0}", "before")):
            status, body = fetch(f"{self.base}/api/v1/usage?{query}")
            self.assertEqual(status, 400, query)
            self.assertEqual(body.count("\n"), 0, body)
            self.assertIn(why, json.loads(body)["error"])

    def test_by_pod_and_namespace_the_api_and_report_agree(self):
        for by, want_labels in (("pod", {"ml/train-a", "ml/notebook-b", "infer/idler-0",
                                         "(no pod)"}),
                                ("namespace", {"ml", "infer", "(no pod)"})):
            p = subprocess.run([GPUDOCTOR, "report", "--db", self.db, "--start", str(self.t0),
                                "--end", str(self.t1), "--json", "--by", by],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            rep = {g["key"]: g for g in json.loads(p.stdout)["groups"]}
            self.assertEqual({g["label"] for g in rep.values()}, want_labels)
            status, body = fetch(f"{self.base}/api/v1/usage?since={self.t0}&until={self.t1}"
                                 f"&by={by}")
            self.assertEqual(status, 200, body)
            u = json.loads(body)
            self.assertEqual(u["by"], by)
            self.assertEqual({g["key"] for g in u["groups"]}, set(rep))
            for g in u["groups"]:
                self.assertAlmostEqual(g["gpu_hours_held"], rep[g["key"]]["gpu_hours_held"],
                                       places=9)
        # GPU 0's ten minutes split between the two pods of "ml".
        ml = [g for g in u["groups"] if g["label"] == "ml"][0]
        self.assertAlmostEqual(ml["gpu_hours_held"], SECONDS / 3600, places=3)
        # The page's "pod" button: a row per pod.
        page = self.page
        page.navigate(f"{self.base}/#usage?since={self.t0}&until={self.t1}")
        page.wait_for("document.querySelector('#usage-by [data-value=pod]') !== null", 30)
        page.evaluate("document.querySelector('#usage-by [data-value=pod]').click()")
        page.wait_for("(rows => rows.length > 0 && rows.every(r => r.dataset.key.startsWith('p:')))"
                      "(Array.from(document.querySelectorAll('#usage-table tbody tr[data-key]')))", 30)
        labels = page.evaluate(
            "Array.from(document.querySelectorAll('#usage-table td.label')).map(c => c.textContent)")
        self.assertEqual(set(labels), {"ml/train-a", "ml/notebook-b", "infer/idler-0", "(no pod)"})
        self.assertEqual(page.errors(), [])

    def test_usage_page(self):
        rep = self.report()
        want = [g for g in rep["groups"] if not g["other"]]
        p = self.page
        p.navigate(f"{self.base}/#usage?since={self.t0}&until={self.t1}")
        p.wait_for(f"document.querySelectorAll('#usage-table tbody tr[data-key]').length === {len(want)}", 30)
        self.assertTrue(p.evaluate("document.getElementById('dash').hidden"))
        rows = p.evaluate("""Array.from(document.querySelectorAll('#usage-table tbody tr[data-key]')).map(r => ({
            key: r.dataset.key, label: r.querySelector('td.label').textContent,
            held: r.querySelector('td.held').textContent, energy: r.querySelector('td.energy').textContent,
            waste: r.querySelector('td.waste').textContent}))""")
        by_key = {r["key"]: r for r in rows}
        for g in want:
            row = by_key[g["key"]]
            self.assertEqual(row["label"], g["label"])
            self.assertAlmostEqual(float(row["held"]), g["gpu_hours_held"], delta=0.6e-4)
            self.assertAlmostEqual(float(row["energy"]), g["energy_kwh"], delta=0.6e-4)
            for f in g["findings"]:
                self.assertIn(f"{f['id']} {round(100 * f['share'])}%", row["waste"])
        # Sorted by GPU-hours held, as report sorts.
        self.assertEqual([r["key"] for r in rows], [g["key"] for g in want])
        # The markup name is text: no element made of it, no dialog.
        self.assertEqual(p.evaluate("document.querySelectorAll('#usage-page img').length"), 0)
        self.assertIn(HOSTILE, p.evaluate("document.getElementById('usage-table').textContent"))
        self.assertEqual(p.dialogs(), [])
        # Both charts drawn, a series per job (and x), with painted pixels.
        for chart in ("usage-gpu_hours_held", "usage-energy_kwh"):
            n = p.evaluate(f"document.querySelectorAll('[data-chart={chart}] .u-legend .u-series').length")
            self.assertEqual(n, len(want) + 1, chart)
            painted = p.evaluate(f"""(() => {{
                const c = document.querySelector('[data-chart={chart}] canvas');
                const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
                return n; }})()""")
            self.assertGreater(painted, 2000, chart)
        legend = p.evaluate("document.querySelector('[data-chart=usage-gpu_hours_held] .u-legend').textContent")
        self.assertIn(HOSTILE, legend)
        # Waste by cause, and the node line.
        self.assertTrue(p.evaluate("document.querySelector('#usage-waste [data-cause=gpu-idle-allocated]') !== null"))
        node = p.evaluate("document.getElementById('usage-node').textContent")
        self.assertIn(f"available {rep['node']['gpu_hours_available']:.4f} GPU-h", node)
        os.makedirs(ARTIFACTS, exist_ok=True)
        p.screenshot(os.path.join(ARTIFACTS, "usage.png"))
        # The fixed window lights no range button.
        self.assertEqual(p.evaluate("document.querySelectorAll('#usage-ranges .active').length"), 0)
        # By user: one row per user.
        p.evaluate("document.querySelector('#usage-by [data-value=user]').click()")
        p.wait_for("Array.from(document.querySelectorAll('#usage-table tbody tr[data-key]'))"
                   ".every(r => r.dataset.key.startsWith('u:'))", 30)
        users = p.evaluate("Array.from(document.querySelectorAll('#usage-table td.label')).map(c => c.textContent)")
        self.assertEqual(sorted(users), ["alice", "bob", "carol", "dave"])
        # Back to the node page: its cards are there.
        p.evaluate("document.getElementById('tab-node').click()")
        p.wait_for("!document.getElementById('dash').hidden && document.getElementById('usage-page').hidden", 10)
        p.wait_for("document.querySelectorAll('.card.gpu').length === 4", 15)
        self.assertEqual(p.errors(), [])


if __name__ == "__main__":
    unittest.main()
