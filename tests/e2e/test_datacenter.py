"""Datacenter GPUs end to end: tracegen's MIG, NVLink and Hopper scenarios,
replayed by the fake NVML with real child processes in the GPUs' process
lists, through the real binary: `status --json`, `status`, `ps`, `who`,
`kill`, `diagnose --from`, and /metrics of `serve`; and a real Prometheus
scraping `serve` on the Hopper scenario answers every PromQL expression of
NVIDIA's dcgm-exporter Grafana dashboard (tests/data/dcgm_exporter_dashboard.json).

Each scenario is one sample held for the whole test (the fake keeps
answering with the last sample), so what the binary shows must equal it.
"""
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

from gd_e2e import E2E, DATA_DIR, FAKE_NVML, GPUDOCTOR, kill_tree, read_trace, run, \
    spawn_python, unused_pid, write_scenario
from test_export import TRACEGEN
from test_serve import Serve, parse_metrics

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "deploy"))
import promql_names  # noqa: E402

MIB = 1024 * 1024
SLEEPER = "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(300)"


def tracegen(scenario, gpus, duration, directory):
    out = os.path.join(directory, f"{scenario}.jsonl")
    subprocess.run([TRACEGEN, "--scenario", scenario, "--gpus", str(gpus), "--duration",
                    duration, "-o", out, "-q"], check=True, timeout=120)
    with open(out) as f:
        return out, read_trace(f.read())


class Datacenter(E2E):
    """A scenario's last sample as the fake's only sample, its GPU processes
    replaced by live children (same count, same order)."""

    def setUp(self):
        super().setUp()
        if not os.path.exists(TRACEGEN):
            self.fail(f"{TRACEGEN} not built")

    def hold(self, scenario, gpus, duration="3s", live=True):
        path, (header, samples) = tracegen(scenario, gpus, duration, self.tmp.name)
        sample = samples[-1]
        self.trace_path = path
        self.pid_map = {}
        if live:
            for g in sample["gpus"]:
                for p in g.get("processes") or []:
                    if p["pid"] not in self.pid_map:
                        child = spawn_python(SLEEPER)
                        self.children.append(child)
                        self.pid_map[p["pid"]] = int(child.stdout.readline())
                    p["pid"] = self.pid_map[p["pid"]]
        self.header, self.sample = header, sample
        self.scenario = write_scenario(header, [sample], self.tmp.name)
        return header, sample

    def status_json(self):
        p = run(["status", "--json"], scenario=self.scenario, check=True)
        header, samples = read_trace(p.stdout)
        return header, samples[0]

    def gpu(self, sample, index):
        return next(g for g in sample["gpus"] if g["index"] == index)


class Mig(Datacenter):
    def setUp(self):
        super().setUp()
        self.hold("mig-a100", 1)
        self.g0 = self.gpu(self.sample, 0)
        self.by_gi = {p["gi_id"]: p["pid"] for p in self.g0["processes"]}

    def test_status_json_has_every_instance_and_each_process_its_instance(self):
        header, sample = self.status_json()
        got = self.gpu(sample, 0)
        self.assertEqual(got["mig_instances"], self.g0["mig_instances"])
        self.assertEqual(
            sorted((p["pid"], p["gi_id"], p["ci_id"]) for p in got["processes"]),
            sorted((p["pid"], p["gi_id"], p["ci_id"]) for p in self.g0["processes"]))
        self.assertIsNone(got.get("util_pct"))  # a MIG GPU has none: unknown, not 0
        self.assertEqual([m["profile"] for m in header["gpus"][0]["mig_profiles"]],
                         ["3g.40gb", "2g.20gb", "2g.20gb"])

    def test_status_names_instances_with_memory_and_processes(self):
        out = run(["status"], scenario=self.scenario, check=True).stdout
        for m in self.g0["mig_instances"]:
            line = next(l for l in out.splitlines() if f"GI {m['gi_id']} CI 0" in l)
            self.assertIn(f"MIG {m['profile']}", line)
            self.assertIn(m["uuid"], line)
            self.assertIn(f"processes {self.by_gi[m['gi_id']]} python3", line)

    def test_ps_shows_each_process_instance(self):
        out = run(["ps"], scenario=self.scenario, check=True).stdout
        for gi, pid in self.by_gi.items():
            row = next(l for l in out.splitlines() if f" {pid} " in l)
            self.assertTrue(row.startswith(f"0    {gi}/0 "), row)
        procs = json.loads(run(["ps", "--json"], scenario=self.scenario,
                               check=True).stdout)["processes"]
        profiles = {m["gi_id"]: m["profile"] for m in self.g0["mig_instances"]}
        for p in procs:
            self.assertEqual(p["mig_profile"], profiles[p["gi_id"]])
            self.assertIsNone(p["sm_util_pct"])

    def test_who_accounts_memory_per_instance(self):
        out = run(["who", "0"], scenario=self.scenario, check=True).stdout
        self.assertIn("MIG instances (each has its own memory)", out)
        who = json.loads(run(["who", "0", "--json"], scenario=self.scenario,
                             check=True).stdout)
        who = who["gpus"][0] if "gpus" in who else who
        got = {m["gi_id"]: m for m in who["mig_instances"]}
        for m in self.g0["mig_instances"]:
            self.assertEqual(got[m["gi_id"]]["used_bytes"], m["mem_used_bytes"])
            self.assertEqual(got[m["gi_id"]]["profile"], m["profile"])
            self.assertEqual(got[m["gi_id"]]["pids"], [self.by_gi[m["gi_id"]]])

    def test_kill_one_instance_and_the_reset_text_names_it(self):
        target = self.by_gi[5]
        p = run(["kill", "--gpu", "0", "--mig", "5", "--dry-run"], scenario=self.scenario)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"{target}", p.stdout)
        self.assertIn("GPU process on GPU 0 MIG 5 (2g.20gb)", p.stdout)
        for gi in (1, 6):
            self.assertNotIn(f" {self.by_gi[gi]} ", p.stdout)
        # The fake keeps listing it after it exits: the memory stays on that
        # instance, and the way out is to re-create that instance.
        p = run(["kill", "--gpu", "0", "--mig", "5", "--yes", "--timeout", "1s"],
                scenario=self.scenario, timeout=60)
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
        self.assertIn("MIG instance GI 5 (2g.20gb)", p.stdout)
        self.assertIn("nvidia-smi mig -i 0 -gi 5 -dci", p.stdout)
        bad = run(["kill", "--gpu", "0", "--mig", "9", "--dry-run"], scenario=self.scenario)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("no MIG instance", bad.stderr)

    def test_a_missing_owner_on_an_instance_gets_instance_advice(self):
        self.g0["processes"][2]["pid"] = unused_pid()
        scenario = write_scenario(self.header, [self.sample], self.tmp.name)
        out = run(["who", "0"], scenario=scenario, check=True).stdout
        self.assertIn("the memory is on MIG instance GI 6 (2g.20gb)", out)
        self.assertIn("nvidia-smi mig -i 0 -gi 6 -dci", out)
        # Only that instance: no whole-GPU reset is asked for.
        self.assertNotIn("--gpu-reset", out)

    def test_metrics_have_instance_series(self):
        serve = Serve(self.scenario, ["--no-db"])
        try:
            m = serve.wait_metrics(lambda m: any(k.startswith("DCGM_FI_DEV_FB_USED{") for k in m))
            for inst in self.g0["mig_instances"]:
                keys = [k for k in m if k.startswith("DCGM_FI_DEV_FB_USED{")
                        and f'GPU_I_ID="{inst["gi_id"]}"' in k]
                self.assertEqual(len(keys), 1, keys)
                self.assertIn(f'GPU_I_PROFILE="{inst["profile"]}"', keys[0])
                self.assertEqual(m[keys[0]], inst["mem_used_bytes"] // MIB)
        finally:
            kill_tree(serve.proc)


class Nvlink(Datacenter):
    def setUp(self):
        super().setUp()
        # 3 minutes: link 7 of GPU 3 errs from the first minute on.
        self.hold("nvlink-errors", 8, duration="3m")
        self.g3 = self.gpu(self.sample, 3)
        self.l7 = self.g3["nvlinks"][7]

    def test_status_json_has_every_link_of_every_gpu(self):
        _, sample = self.status_json()
        for want in self.sample["gpus"]:
            got = self.gpu(sample, want["index"])
            self.assertEqual(got["nvlinks"], want["nvlinks"])
            self.assertEqual(got["fabric_state"], "completed")
            # Rates from the driver's cumulative counters: within 5%.
            for k in ("nvlink_tx_bytes_per_s", "nvlink_rx_bytes_per_s"):
                self.assertAlmostEqual(got[k] / want[k], 1.0, delta=0.05)

    def test_status_shows_the_erroring_link(self):
        out = run(["status"], scenario=self.scenario, check=True).stdout
        self.assertIn(f"!! NVLink 7: {self.l7['crc_errors_total']} CRC errors, "
                      f"{self.l7['replay_total']} replays", out)
        self.assertEqual(out.count("18 links: 18 up"), 8)

    def test_diagnose_from_the_trace_finds_the_link(self):
        p = run(["diagnose", "--from", self.trace_path, "--json"])
        self.assertEqual(p.returncode, 1, p.stderr)
        findings = [f for f in json.loads(p.stdout)["findings"] if f["id"] == "nvlink-degraded"]
        self.assertEqual(len(findings), 1, findings)
        self.assertEqual(findings[0]["gpus"], [3])
        self.assertIn("NVLink 7", findings[0]["title"])

    def test_metrics_carry_nvlink_names(self):
        serve = Serve(self.scenario, ["--no-db"])
        try:
            m = serve.wait_metrics(lambda m: any("NVLINK_CRC" in k for k in m))
            crc = {k: v for k, v in m.items()
                   if k.startswith("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{")}
            self.assertEqual(len(crc), 8)
            self.assertEqual(next(v for k, v in crc.items() if 'gpu="3"' in k),
                             self.l7["crc_errors_total"])
            per_link = [k for k in m if k.startswith("gpudoctor_nvlink_errors_total{")
                        and 'gpu="3"' in k and 'link="7"' in k and 'type="crc"' in k]
            self.assertEqual(len(per_link), 1)
            self.assertEqual(len([k for k in m if k.startswith("gpudoctor_nvlink_up{")]), 8 * 18)
            self.assertTrue(any(k.startswith("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{") for k in m))
        finally:
            kill_tree(serve.proc)


class Hopper(Datacenter):
    GPM = ("sm_active_pct", "sm_occupancy_pct", "tensor_active_pct", "dram_active_pct",
           "fp64_active_pct", "fp32_active_pct", "fp16_active_pct", "gr_engine_active_pct")

    def setUp(self):
        super().setUp()
        self.hold("hopper-gpm", 1)
        self.g0 = self.gpu(self.sample, 0)

    def test_status_json_has_the_gpm_activity_and_process_utilisation(self):
        _, sample = self.status_json()
        got = self.gpu(sample, 0)
        for k in self.GPM:
            self.assertEqual(got[k], self.g0[k], k)
        want = {p["pid"]: p for p in self.g0["processes"]}
        for p in got["processes"]:
            # NVML's samples are whole percents (rounded half up).
            self.assertEqual(p["sm_util_pct"], int(want[p["pid"]]["sm_util_pct"] + 0.5))
            self.assertEqual(p["mem_util_pct"], int(want[p["pid"]]["mem_util_pct"] + 0.5))

    def test_ps_shows_sm_and_memory_utilisation(self):
        out = run(["ps"], scenario=self.scenario, check=True).stdout
        p = self.g0["processes"][0]
        row = next(l for l in out.splitlines() if f" {p['pid']} " in l)
        self.assertIn(f" {int(p['sm_util_pct'] + 0.5)} ", row)

    def test_metrics_profiling_ratios(self):
        serve = Serve(self.scenario, ["--no-db"])
        try:
            m = serve.wait_metrics(lambda m: any("DCGM_FI_PROF_SM_ACTIVE" in k for k in m))
            names = {"DCGM_FI_PROF_SM_ACTIVE": "sm_active_pct",
                     "DCGM_FI_PROF_SM_OCCUPANCY": "sm_occupancy_pct",
                     "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": "tensor_active_pct",
                     "DCGM_FI_PROF_DRAM_ACTIVE": "dram_active_pct",
                     "DCGM_FI_PROF_PIPE_FP64_ACTIVE": "fp64_active_pct",
                     "DCGM_FI_PROF_PIPE_FP32_ACTIVE": "fp32_active_pct",
                     "DCGM_FI_PROF_PIPE_FP16_ACTIVE": "fp16_active_pct",
                     "DCGM_FI_PROF_GR_ENGINE_ACTIVE": "gr_engine_active_pct"}
            for name, field in names.items():
                vals = [v for k, v in m.items() if k.startswith(name + "{")]
                self.assertEqual(len(vals), 1, name)
                self.assertAlmostEqual(vals[0], self.g0[field] / 100, places=9, msg=name)
        finally:
            kill_tree(serve.proc)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HopperDashboard(Datacenter):
    """A real Prometheus scrapes serve on the Hopper scenario; every PromQL
    expression of NVIDIA's dcgm-exporter dashboard must return data."""

    def test_every_dashboard_expression_returns_data(self):
        prometheus = shutil.which("prometheus")
        if not prometheus:
            self.fail("prometheus not installed (Debian package 'prometheus')")
        with open(os.path.join(DATA_DIR, "dcgm_exporter_dashboard.json")) as f:
            dashboard = json.load(f)
        self.hold("hopper-gpm", 2)
        serve = Serve(self.scenario, ["--no-db"])
        self.addCleanup(kill_tree, serve.proc)
        port = free_port()
        cfg = os.path.join(self.tmp.name, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gpudoctor
    static_configs:
      - targets: ['{serve.host}:{serve.port}']
""")
        log = open(os.path.join(self.tmp.name, "prometheus.log"), "w")
        prom = subprocess.Popen([prometheus, f"--config.file={cfg}",
                                 f"--storage.tsdb.path={os.path.join(self.tmp.name, 'tsdb')}",
                                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.addCleanup(kill_tree, prom)

        def query(expr):
            url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
            with urllib.request.urlopen(url, timeout=5) as r:
                doc = json.loads(r.read().decode())
            self.assertEqual(doc["status"], "success", doc)
            return doc["data"]["result"]

        def series(match):
            url = f"http://127.0.0.1:{port}/api/v1/series?" + urllib.parse.urlencode(
                {"match[]": match})
            with urllib.request.urlopen(url, timeout=5) as r:
                return json.loads(r.read().decode())["data"]

        deadline = time.time() + 90
        while True:
            try:
                if query("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"):
                    break
            except OSError:
                pass
            if time.time() > deadline:
                self.fail("Prometheus never scraped the profiling series")
            time.sleep(0.5)

        empty = []
        for panel in dashboard["panels"]:
            expr = promql_names.grafana_to_promql(panel["expr"])
            if not query(expr):
                empty.append(f"{panel['title']}: {expr}")
        for var in dashboard["variables"]:
            q = var["query"]
            selector = q[len("label_values("):q.rindex(",")]
            label = q[q.rindex(",") + 1:-1].strip()
            found = series(promql_names.grafana_to_promql(selector))
            if not any(label in s for s in found):
                empty.append(f"variable {var['name']}: {q}")
        self.assertEqual(empty, [], "dashboard expressions without data")
        self.assertEqual(len(dashboard["panels"]), 8)
        # The tensor-core panel shows the scenario's value, per GPU.
        tensor = query(promql_names.grafana_to_promql(dashboard["panels"][6]["expr"]))
        self.assertEqual(len(tensor), 2)
        want = {str(g["index"]): g["tensor_active_pct"] / 100 for g in self.sample["gpus"]}
        for r in tensor:
            self.assertAlmostEqual(float(r["value"][1]), want[r["metric"]["gpu"]], places=6)


if __name__ == "__main__":
    unittest.main()
