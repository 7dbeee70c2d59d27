"""A fleet, end to end: three `gpudoctor serve` "nodes" on loopback, each on
the fake NVML with its own scenario, scraped every second by a real
Prometheus (the Debian package) that loads deploy/prometheus/gpudoctor-rules.yml.
Everything is checked through Prometheus's HTTP API, as an operator's
Grafana and Alertmanager would see it:

  node-a  tests/data/scenario_4gpu.jsonl, GPU processes alive: busy, healthy
  node-b  GPU 0 at 88 C, clocks held down by sw_thermal_slowdown while busy
          (finding thermal-throttling)
  node-c  GPU 3's memory held by a pid that no longer exists (finding
          orphaned-memory, critical), GPU 1 96% full, and an Xid 79 for
          GPU 0 appended to its kernel log while it runs

Each serve names its node with --hostname, as the Hostname label of every
series; `gpudoctor diagnose --prometheus` then diagnoses the live fleet from
this Prometheus alone.
"""
import copy
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

from gd_e2e import FAKE_NVML, GPUDOCTOR, kill_tree, load_scenario, promtool_unexpected, \
    scenario_4gpu, spawn_python, \
    unused_pid, write_scenario

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
RULES = os.path.join(ROOT, "deploy", "prometheus", "gpudoctor-rules.yml")
DASHBOARD = os.path.join(ROOT, "deploy", "grafana", "gpudoctor-dashboard.json")
sys.path.insert(0, os.path.join(ROOT, "tests", "deploy"))
import promql_names  # noqa: E402

PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
MiB = 1024 * 1024
# How long the fleet may take to reach each state (serve's first sample and
# diagnosis, Prometheus's first scrapes and rule evaluations, on a loaded CI
# machine). Polling returns as soon as the state is reached.
SETTLE_S = 90

# serve's diagnosis, made quick for the test: a 10 s window evaluated every
# second (defaults: 60 s, 5 s).
SERVE_CONFIG = """
[alerting]
window_s = 10
evaluate_every_s = 1
"""
XID_79_GPU0 = ("NVRM: Xid (PCI:0000:07:00): 79, pid='<unknown>', name=<unknown>, "
               "GPU has fallen off the bus.\n")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode()


def wait_for(what, fn, timeout=SETTLE_S, interval=0.5, until=bool):
    """Polls fn() until until(value) holds and returns the value; fails
    naming `what` (a string, or a function giving one, e.g. with a log) and
    the last value seen."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = fn()
            if until(last):
                return last
        except (OSError, ValueError, KeyError) as e:
            last = e
        time.sleep(interval)
    what = what() if callable(what) else what
    raise AssertionError(f"timed out after {timeout}s waiting for {what}; last: {last!r}")


def scenarios(live_pid):
    """The three nodes' scenarios: (header, samples) each."""
    header, samples = load_scenario(scenario_4gpu())
    first = samples[0]

    def with_pids(sample, pid):
        s = copy.deepcopy(sample)
        for g in s["gpus"]:
            for p in g.get("processes") or []:
                p["pid"] = pid
        return s

    a = with_pids(first, live_pid)

    b = with_pids(first, live_pid)
    g0 = b["gpus"][0]
    g0.update(util_pct=99.0, temp_c=88, sm_clock_mhz=1050, power_w=280.0,
              clock_event_reasons=["sw_thermal_slowdown"])

    c = with_pids(first, live_pid)
    c["gpus"][1]["mem_used_bytes"] = 82678120448         # 96% of 80 GiB
    c["gpus"][1]["processes"][0]["used_bytes"] = 81604378624
    c["gpus"][3]["processes"] = [{"pid": unused_pid(), "used_bytes": 17179869184,
                                  "type": "compute"}]
    c["gpus"][3]["mem_used_bytes"] = 17179869184
    return {"node-a": (header, [a]), "node-b": (header, [b]), "node-c": (header, [c])}


class Fleet(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Prerequisites (scripts/install-deps.sh --test), never a skip.
        if not FAKE_NVML or not os.path.exists(FAKE_NVML):
            raise AssertionError(f"fake libnvidia-ml.so.1 not found (FAKE_NVML_LIB={FAKE_NVML!r})")
        if not PROMETHEUS:
            raise AssertionError("prometheus not installed (Debian package 'prometheus')")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.procs = []
        try:
            cls._start_fleet()
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for p in reversed(cls.procs):
            kill_tree(p)
        for p in cls.procs:
            log = getattr(p, "log_path", None)
            if log and os.environ.get("GD_E2E_VERBOSE"):
                print(f"--- {log}\n{open(log).read()[-4000:]}", file=sys.stderr)
        cls.tmp.cleanup()

    @classmethod
    def _spawn(cls, name, cmd, env=None):
        log_path = os.path.join(cls.tmp.name, f"{name}.log")
        with open(log_path, "w") as log:
            p = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                 start_new_session=True)
        p.log_path = log_path
        cls.procs.append(p)
        return p

    @classmethod
    def _log(cls, name):
        with open(os.path.join(cls.tmp.name, f"{name}.log")) as f:
            return f.read()[-3000:]

    @classmethod
    def _start_fleet(cls):
        d = cls.tmp.name
        # The GPU jobs' owner: a live process whose pid every scenario uses.
        job = spawn_python("import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(600)")
        cls.procs.append(job)
        live_pid = int(job.stdout.readline())

        config = os.path.join(d, "serve.toml")
        with open(config, "w") as f:
            f.write(SERVE_CONFIG)
        cls.kmsg_c = os.path.join(d, "node-c-kern.log")
        with open(cls.kmsg_c, "w") as f:
            f.write("kernel: eth0: link up\n")

        cls.nodes = {}
        cls.scen = scenarios(live_pid)
        for name, (header, samples) in cls.scen.items():
            path = write_scenario(header, samples, d)
            port = free_port()
            kmsg = cls.kmsg_c if name == "node-c" else "none"
            env = dict(os.environ, FAKE_NVML_SCENARIO=path)
            cls._spawn(name, [GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", kmsg,
                              "--interval", "1s", "serve", "--listen", f"127.0.0.1:{port}",
                              "--no-db", "--config", config, "--hostname", name],
                       env=env)
            cls.nodes[name] = f"127.0.0.1:{port}"
        for name, addr in cls.nodes.items():
            wait_for(lambda: f"{name} /healthz (log: {cls._log(name)})",
                     lambda: http_get(f"http://{addr}/healthz")[0] == 200, timeout=30)

        cls.prom_port = free_port()
        prom_cfg = os.path.join(d, "prometheus.yml")
        targets = "\n".join(
            f"      - targets: ['{addr}']\n        labels: {{node: {name}}}"
            for name, addr in cls.nodes.items())
        with open(prom_cfg, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - {RULES}
scrape_configs:
  - job_name: gpudoctor
    static_configs:
{targets}
""")
        cls._spawn("prometheus", [
            PROMETHEUS, f"--config.file={prom_cfg}",
            f"--storage.tsdb.path={os.path.join(d, 'tsdb')}",
            f"--web.listen-address=127.0.0.1:{cls.prom_port}",
            "--storage.tsdb.retention.time=1h", "--log.level=warn"])
        cls.prometheus_started = time.time()
        wait_for(lambda: f"prometheus ready (log: {cls._log('prometheus')})",
                 lambda: http_get(f"{cls.prom()}/-/ready")[0] == 200, timeout=60)

        # The Xid reaches node-c's kernel log once Prometheus has scraped
        # node-c's GPU 0 without one (Xid 0), so the alert sees the change.
        def scraped_without_xid():
            url = f"{cls.prom()}/api/v1/query?" + urllib.parse.urlencode(
                {"query": 'DCGM_FI_DEV_XID_ERRORS{node="node-c",gpu="0"} == 0'})
            return json.loads(http_get(url)[1])["data"]["result"]
        wait_for("node-c scraped", scraped_without_xid)
        with open(cls.kmsg_c, "a") as f:
            f.write(XID_79_GPU0)

    # --- Prometheus HTTP API -------------------------------------------------

    @classmethod
    def prom(cls):
        return f"http://127.0.0.1:{cls.prom_port}"

    def api(self, path, **params):
        url = f"{self.prom()}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        status, body = http_get(url)
        doc = json.loads(body)
        self.assertEqual(doc["status"], "success", doc)
        return doc["data"]

    def query(self, expr):
        data = self.api("query", query=expr)
        self.assertEqual(data["resultType"], "vector", expr)
        return data["result"]

    def by_node_gpu(self, expr):
        return {(r["metric"]["node"], r["metric"].get("gpu")): float(r["value"][1])
                for r in self.query(expr)}

    def wait_query(self, what, expr, pred=lambda res: len(res) > 0):
        return wait_for(what, lambda: self.query(expr), until=pred)

    def setUp(self):
        # Every test needs all three targets scraped at least once.
        wait_for("all three targets up", self.all_up)

    def all_up(self):
        active = self.api("targets", state="active")["activeTargets"]
        return len(active) == 3 and all(t["health"] == "up" for t in active)

    # --- tests ----------------------------------------------------------------

    def test_all_three_targets_are_up(self):
        active = self.api("targets", state="active")["activeTargets"]
        self.assertEqual(sorted(t["labels"]["node"] for t in active), ["node-a", "node-b", "node-c"])
        for t in active:
            self.assertEqual(t["health"], "up", t)
            self.assertEqual(t["lastError"], "", t)
            self.assertEqual(t["scrapeUrl"], f"http://{self.nodes[t['labels']['node']]}/metrics")
        up = self.by_node_gpu('up{job="gpudoctor"}')
        self.assertEqual(up, {("node-a", None): 1, ("node-b", None): 1, ("node-c", None): 1})

    def test_dcgm_series_carry_each_nodes_values(self):
        header = self.scen["node-a"][0]
        fields = {
            "DCGM_FI_DEV_GPU_UTIL": lambda g: g["util_pct"],
            "DCGM_FI_DEV_GPU_TEMP": lambda g: g["temp_c"],
            "DCGM_FI_DEV_POWER_USAGE": lambda g: g["power_w"],
            "DCGM_FI_DEV_SM_CLOCK": lambda g: g["sm_clock_mhz"],
            "DCGM_FI_DEV_MEM_CLOCK": lambda g: g["mem_clock_mhz"],
            "DCGM_FI_DEV_FB_USED": lambda g: g["mem_used_bytes"] // MiB,
        }
        totals = {g["index"]: g["memory_total_bytes"] for g in header["gpus"]}
        fields["DCGM_FI_DEV_FB_FREE"] = \
            lambda g: (totals[g["index"]] - g["mem_used_bytes"]) // MiB
        for metric, value_of in fields.items():
            want = {(node, str(g["index"])): float(value_of(g))
                    for node, (_, samples) in self.scen.items() for g in samples[0]["gpus"]}
            with self.subTest(metric=metric):
                got = self.wait_query(f"{metric} for 12 GPUs", f'{metric}{{job="gpudoctor"}}',
                                      lambda r: len(r) == 12)
                got = {(r["metric"]["node"], r["metric"]["gpu"]): float(r["value"][1]) for r in got}
                self.assertEqual(got, want)

    def test_dcgm_labels_name_the_gpu(self):
        header = self.scen["node-a"][0]
        for r in self.query('DCGM_FI_DEV_GPU_UTIL{node="node-b"}'):
            m = r["metric"]
            g = header["gpus"][int(m["gpu"])]
            self.assertEqual(m["UUID"], g["uuid"])
            self.assertEqual(m["modelName"], g["name"])
            self.assertEqual(m["device"], f"nvidia{g['index']}")
            self.assertEqual(m["Hostname"], "node-b")  # serve --hostname

    def test_memory_ratio_of_the_rules_matches_the_scenarios(self):
        ratio = self.by_node_gpu(
            'DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE) > 0.90')
        self.assertEqual(set(ratio), {("node-c", "1")})
        self.assertAlmostEqual(ratio[("node-c", "1")], 0.9625, places=3)

    def test_findings_reach_prometheus(self):
        self.wait_query("node-c orphaned-memory",
                        'gpudoctor_finding{node="node-c",id="orphaned-memory"}')
        self.wait_query("node-b thermal-throttling",
                        'gpudoctor_finding{node="node-b",id="thermal-throttling"}')
        findings = {(r["metric"]["node"], r["metric"]["id"], r["metric"]["severity"],
                     r["metric"].get("gpu", "")): float(r["value"][1])
                    for r in self.query("gpudoctor_finding")}
        self.assertEqual(findings[("node-c", "orphaned-memory", "critical", "3")], 1)
        self.assertEqual(findings[("node-b", "thermal-throttling", "warning", "0")], 1)
        for node, fid, _, gpu in findings:
            self.assertFalse(fid == "orphaned-memory" and node != "node-c", findings)
            self.assertFalse(fid == "thermal-throttling" and (node, gpu) != ("node-b", "0"),
                             findings)
        self.assertFalse([k for k in findings if k[0] == "node-a" and k[2] == "critical"],
                         findings)

    def test_every_series_names_its_node_in_hostname(self):
        ours = '{job="gpudoctor",__name__=~"(DCGM|gpudoctor)_.*"'
        self.assertEqual(self.query(f'count({ours},Hostname=""}})'), [])
        pairs = self.query(f'count by (Hostname, node) ({ours}}})')
        self.assertEqual(sorted((r["metric"]["node"], r["metric"]["Hostname"])
                                for r in pairs),
                         [("node-a", "node-a"), ("node-b", "node-b"), ("node-c", "node-c")])
        self.assertGreater(len(self.query('{__name__=~"gpudoctor_.*",node="node-a"}')), 40)

    def test_diagnose_prometheus_reads_the_live_fleet(self):
        """diagnose --prometheus on this Prometheus: every serve is a node,
        joined by its Hostname; the throttled node and the Xid are found;
        the rules that judge GPU processes judge from serve's per-process
        series: node-c's dead holder of GPU 3 is orphaned-memory there and
        nowhere else, and every node's one process driving GPUs 0-2 at 97%,
        42% and 88% is gpu-imbalance (serve's own 10 s alerting window is
        too short for that rule's 30 samples; the fleet's 10 minutes are
        not)."""
        self.wait_query("node-c's Xid in Prometheus",
                        'DCGM_FI_DEV_XID_ERRORS{node="node-c",gpu="0"} == 79')
        # thermal-throttling wants a sustained window: 40 s of scrapes.
        time.sleep(max(0.0, self.prometheus_started + 45 - time.time()))
        r = subprocess.run([GPUDOCTOR, "diagnose", "--prometheus", self.prom(),
                            "--since", "10m", "--step", "1s", "--json"],
                           capture_output=True, text=True, timeout=120)
        self.assertIn(r.returncode, (0, 1, 2), r.stderr)
        doc = json.loads(r.stdout)
        reports = {n["node"]: n["report"] for n in doc["nodes"]}
        self.assertEqual(sorted(reports), ["node-a", "node-b", "node-c"], r.stdout)
        ids = {node: {(f["id"], f["severity"], tuple(f["gpus"])) for f in rep["findings"]}
               for node, rep in reports.items()}
        self.assertIn(("thermal-throttling", "warning", (0,)), ids["node-b"], ids)
        self.assertIn("xid-error", {i for i, _, _ in ids["node-c"]}, ids)
        self.assertFalse([f for f in ids["node-a"] if f[1] == "critical"], ids)
        for node in ("node-a", "node-b"):
            self.assertNotIn("xid-error", {i for i, _, _ in ids[node]}, ids)
            self.assertNotIn("orphaned-memory", {i for i, _, _ in ids[node]}, ids)
        self.assertIn(("orphaned-memory", "critical", (3,)), ids["node-c"], ids)
        # cpu-contention is left out: the serves read this machine's real
        # run queues, and a loaded test host (parallel suites on 2 cores)
        # is real contention that the rule rightly reports.
        process_rules = {"orphaned-memory", "gpu-imbalance", "gpu-idle-allocated",
                         "input-bound", "memory-leak",
                         "gpu-shared-contention", "memory-underused"}
        for node, found in ids.items():
            got = {(i, g) for i, sev, g in found if i in process_rules and sev != "info"}
            want = {("gpu-imbalance", (0, 1, 2))}
            if node == "node-c":
                want.add(("orphaned-memory", (3,)))
            self.assertEqual(got, want, (node, ids))
            imbalance = [f for f in reports[node]["findings"] if f["id"] == "gpu-imbalance"]
            self.assertIn("GPU 1 42%", imbalance[0]["evidence"])
            # GPU 3's holder has no memory figure (NVML gave none): its list
            # is incomplete in the series, so no rule counts GPU 3 as empty.
            self.assertNotIn(3, imbalance[0]["gpus"])
        self.assertEqual(doc["summary"]["checked"], 3)
        self.assertEqual(doc["summary"]["not_checked"], [])

    def test_xid_reaches_prometheus(self):
        got = self.wait_query("Xid 79 on node-c GPU 0",
                              'DCGM_FI_DEV_XID_ERRORS{node="node-c",gpu="0"} == 79')
        self.assertEqual(len(got), 1)
        others = self.by_node_gpu('DCGM_FI_DEV_XID_ERRORS != 0')
        self.assertEqual(set(others), {("node-c", "0")})

    def test_rules_are_loaded_and_evaluate_cleanly(self):
        with open(RULES) as f:
            want_groups = [g["name"] for g in promql_names.yaml.safe_load(f)["groups"]] \
                if promql_names.yaml else None

        def evaluated():
            groups = self.api("rules")["groups"]
            rules = [r for g in groups for r in g["rules"]]
            return groups if rules and all(r.get("lastEvaluation", "").startswith("20")
                                           and not r["lastEvaluation"].startswith("0001")
                                           for r in rules) else None

        groups = wait_for("every rule evaluated", evaluated)
        if want_groups is not None:
            self.assertEqual(sorted(g["name"] for g in groups), sorted(want_groups))
        for g in groups:
            for r in g["rules"]:
                self.assertEqual(r["health"], "ok", r)
                self.assertEqual(r.get("lastError", ""), "", r)
        names = {r["name"] for g in groups for r in g["rules"]}
        self.assertIn("GpudoctorFindingCritical", names)
        self.assertIn("GpuMemoryAlmostFull", names)

    def alerts(self):
        return [(a["labels"]["alertname"], a["labels"].get("node"), a["labels"].get("gpu"),
                 a["labels"].get("id"), a["state"]) for a in self.api("alerts")["alerts"]]

    def test_alerts_fire_and_wait_as_the_rules_say(self):
        # `for: 0` rules fire at once; the others are pending for their `for`.
        want = [
            ("GpudoctorFindingCritical", "node-c", "3", "orphaned-memory", "firing"),
            ("GpuXidError", "node-c", "0", None, "firing"),
            ("GpudoctorFindingWarning", "node-b", "0", "thermal-throttling", "pending"),
            ("GpuTemperatureHigh", "node-b", "0", None, "pending"),
            ("GpuMemoryAlmostFull", "node-c", "1", None, "pending"),
            ("GpuSaturated", "node-a", "0", None, "pending"),
            ("GpuSaturated", "node-b", "0", None, "pending"),
        ]
        # On a very slow run a 2m/3m `for` may have passed: then firing is right too.
        def present(w, alerts):
            if w in alerts:
                return True
            late = time.time() - self.prometheus_started > 120
            return late and w[4] == "pending" and w[:4] + ("firing",) in alerts

        got = wait_for("the expected alerts", self.alerts,
                       until=lambda a: all(present(w, a) for w in want))
        # Nothing about node-a's healthy GPUs beyond saturation (info).
        for name, node, gpu, fid, state in got:
            if node == "node-a":
                self.assertIn(name, {"GpuSaturated", "GpudoctorFindingWarning"}, got)
            self.assertNotEqual(name, "GpudoctorTargetDown", got)
            self.assertNotEqual(name, "GpudoctorCollectionFailing", got)
        temps = [a for a in got if a[0] == "GpuTemperatureHigh"]
        self.assertEqual(len(temps), 1, got)

    def test_every_metric_of_rules_and_dashboard_is_in_prometheus(self):
        if promql_names.yaml is None:
            self.fail("python3-yaml missing (Debian package 'python3-yaml')")
        self.wait_query("findings", "gpudoctor_finding")
        used = promql_names.rule_exprs(RULES) + promql_names.dashboard_exprs(DASHBOARD)
        names = set()
        for _, expr in used:
            names |= promql_names.metric_names(expr)
        self.assertGreater(len(names), 30)
        missing = [n for n in sorted(names) if not self.query(f'count({{__name__="{n}"}})')]
        self.assertEqual(missing, [], "used by deploy/ but not in Prometheus")

    def test_every_dashboard_query_runs_and_returns_data(self):
        self.wait_query("findings", 'gpudoctor_finding{node="node-c"}')
        empty = []
        for where, expr in promql_names.dashboard_exprs(DASHBOARD):
            if expr.startswith("label_values("):
                m = expr[len("label_values("):expr.rindex(",")]
                label = expr[expr.rindex(",") + 1:-1].strip()
                series = self.api("series", **{"match[]": promql_names.grafana_to_promql(m)})
                if not any(label in s for s in series):
                    empty.append(where)
                continue
            q = promql_names.grafana_to_promql(expr)
            if not self.query(q):
                empty.append(f"{where}: {q}")
        self.assertEqual(empty, [], "dashboard queries without data")

    def test_metrics_page_passes_promtool(self):
        if not PROMTOOL:
            self.fail("promtool not installed (Debian package 'prometheus')")
        status, page = http_get(f"http://{self.nodes['node-c']}/metrics")
        self.assertEqual(status, 200)
        p = subprocess.run([PROMTOOL, "check", "metrics"], input=page, capture_output=True,
                           text=True, timeout=30)
        # dcgm-exporter's own names break two conventions; nothing else may.
        self.assertEqual(promtool_unexpected(p.stdout + p.stderr), [], p.stdout + p.stderr)
        series = [l.rsplit(" ", 1)[0] for l in page.splitlines() if l and not l.startswith("#")]
        self.assertEqual(len(series), len(set(series)), "duplicate series")


if __name__ == "__main__":
    unittest.main()
