"""The fleet of test_prometheus_source.py read from VictoriaMetrics instead
of Prometheus: the same hour of dcgm-exporter and node_exporter series,
imported through VictoriaMetrics' /api/v1/import/prometheus (Prometheus text
with millisecond timestamps), then `gpudoctor export --prometheus` and
`gpudoctor diagnose --prometheus` against its Prometheus-compatible API and
against a real Prometheus holding the same data: the same findings.

victoria-metrics, prometheus or promtool missing fails the test: it is never
skipped (Debian packages 'victoria-metrics' and 'prometheus').
"""
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.request

from gd_e2e import kill_tree
from test_prometheus_source import HOUR, STEP, exposition, free_port, gd, start_prometheus

VICTORIA = shutil.which("victoria-metrics")
NODES = {"node-hot": {0}, "node-ok": set()}


def prometheus_text(openmetrics):
    """OpenMetrics (seconds, # EOF) as the Prometheus text VictoriaMetrics
    imports: no comment lines, timestamps in milliseconds."""
    out = []
    for line in openmetrics.splitlines():
        if not line or line.startswith("#"):
            continue
        head, t = line.rsplit(" ", 1)
        out.append(f"{head} {int(t) * 1000}")
    return "\n".join(out) + "\n"


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


class VictoriaMetrics(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not VICTORIA:
            raise AssertionError("victoria-metrics not installed (Debian package "
                                 "'victoria-metrics')")
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        end = (int(time.time()) - 120) // STEP * STEP
        cls.start, cls.end = end - HOUR, end
        times = list(range(cls.start, end + 1, STEP))
        cls.text = exposition(NODES, times)
        cls.port = free_port()
        cls.url = f"http://127.0.0.1:{cls.port}"
        cls.log = open(os.path.join(d, "vm.log"), "w")
        cls.vm = subprocess.Popen(
            [VICTORIA, f"-storageDataPath={os.path.join(d, 'vm-data')}",
             f"-httpListenAddr=127.0.0.1:{cls.port}", "-retentionPeriod=1y",
             "-loggerLevel=ERROR"],
            stdout=cls.log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            cls.wait_until(lambda: urllib.request.urlopen(cls.url + "/health", timeout=2)
                           .status == 200, "did not start")
            body = prometheus_text(cls.text).encode()
            req = urllib.request.Request(cls.url + "/api/v1/import/prometheus",
                                         data=body, method="POST")
            with urllib.request.urlopen(req, timeout=60) as r:
                if r.status not in (200, 204):
                    raise AssertionError(f"import: HTTP {r.status}")
            urllib.request.urlopen(cls.url + "/internal/force_flush", timeout=30).read()
            # Searchable: both nodes' GPU series listed over the hour.
            q = (f"/api/v1/series?match[]=DCGM_FI_DEV_GPU_UTIL"
                 f"&start={cls.start}&end={cls.end}")
            cls.wait_until(lambda: len(get_json(cls.url + q)["data"]) == 4,
                           "never listed the imported series")
        except BaseException:
            kill_tree(cls.vm)
            raise

    @classmethod
    def wait_until(cls, ok, what):
        deadline = time.time() + 60
        while True:
            try:
                if ok():
                    return
            except OSError:
                pass
            if time.time() > deadline or cls.vm.poll() is not None:
                raise AssertionError(f"victoria-metrics {what}: " +
                                     open(cls.log.name).read()[-2000:])
            time.sleep(0.3)

    @classmethod
    def tearDownClass(cls):
        kill_tree(cls.vm)
        cls.log.close()
        cls.tmp.cleanup()

    def window(self):
        return ("--since", str(self.start), "--until", str(self.end), "--step", "15s")

    def fleet(self, url):
        p = gd("diagnose", "--prometheus", url, *self.window(), "--json")
        self.assertEqual(p.returncode, 1, p.stderr)
        out = json.loads(p.stdout)
        return {n["node"]: sorted((f["id"], f["severity"], f["gpus"])
                                  for f in n["report"]["findings"])
                for n in out["nodes"]}, out["summary"]

    def test_export_reads_victoria_metrics(self):
        out = os.path.join(self.tmp.name, "hot.jsonl")
        p = gd("export", "--prometheus", self.url, "--node", "node-hot", *self.window(),
               "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            lines = [json.loads(l) for l in f if l.strip()]
        header, samples = lines[0], lines[1:]
        self.assertEqual([g["uuid"] for g in header["gpus"]],
                         ["GPU-node-hot-0", "GPU-node-hot-1"])
        self.assertEqual(samples[0]["t"], self.start)
        g0 = samples[10]["gpus"][0]
        self.assertEqual(g0["clock_event_reasons"], ["sw_thermal_slowdown"])
        self.assertEqual((g0["temp_c"], g0["sm_clock_mhz"], g0["util_pct"]), (89, 1200, 98))
        self.assertAlmostEqual(samples[10]["host"]["cpu_util_pct"], 100 * 5.2 / 15, places=1)
        d = gd("diagnose", "--from", out, "--json")
        ids = [(f["id"], f["gpus"]) for f in json.loads(d.stdout)["findings"]
               if f["severity"] in ("warning", "critical")]
        self.assertEqual(ids, [("thermal-throttling", [0])])

    def test_no_remote_read_falls_back_to_query_range_and_says_so(self):
        # VictoriaMetrics has no Prometheus remote-read API: auto reads by
        # query_range and says why once; remote-read alone is the node's
        # error.
        out = os.path.join(self.tmp.name, "auto.jsonl")
        p = gd("export", "--prometheus", self.url, "--node", "node-hot", *self.window(),
               "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        said = [l for l in p.stderr.splitlines() if "remote read not answered" in l]
        self.assertEqual(len(said), 1, p.stderr)
        self.assertIn("/api/v1/read: HTTP 4", said[0])
        self.assertIn("read by query_range", said[0])
        d = gd("diagnose", "--prometheus", self.url, *self.window(), "--read",
               "remote-read", "--json")
        self.assertEqual(d.returncode, 3, d.stderr)
        nodes = json.loads(d.stdout)["summary"]["not_checked"]
        self.assertEqual(len(nodes), 2, d.stdout)

    def test_the_same_findings_as_from_prometheus(self):
        vm, vm_summary = self.fleet(self.url)
        self.assertEqual(sorted(vm), ["node-hot", "node-ok"])
        self.assertIn(("thermal-throttling", "warning", [0]), vm["node-hot"])
        # The same data in a real Prometheus (backfilled with promtool).
        with tempfile.TemporaryDirectory() as d:
            prom, url, log = start_prometheus(d, self.text)
            try:
                pr, pr_summary = self.fleet(url)
            finally:
                kill_tree(prom)
                log.close()
        self.assertEqual(vm, pr)
        self.assertEqual(vm_summary, pr_summary)


if __name__ == "__main__":
    unittest.main()
