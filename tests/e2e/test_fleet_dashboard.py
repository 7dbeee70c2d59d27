"""The dashboard's Fleet page (`serve --fleet-prometheus URL`) and GET
/api/v1/fleet, end to end in headless Chromium: a real Prometheus
backfilled with promtool (test_prometheus_source's helpers) with four
nodes' dcgm-exporter series, and scraping one live `gpudoctor serve
--hostname gpu-live` every second:
  gpu-ecc    GPU 1 has 2 volatile double-bit ECC errors -> ecc-uncorrectable
             (critical): listed first, with its finding, whose summary
             names the GPU's model: markup, which must show as text
  gpu-stale  its series end 150 s ago -> "stale 2m", greyed
  gpu-ok-1, gpu-ok-2  healthy
  gpu-live   the live serve: its name links to that serve's dashboard, at
             the address Prometheus scrapes it (its `instance`)
The serve under test reads the fleet from that Prometheus; its page must
list every node worst first as top's fleet screen does, mark the stale
one, link the live node and open a node's findings, and /api/v1/fleet must
give the figures the page shows. The backfilled series run 10 minutes past
now (each round finds a sample at most one step old however long the test
takes), which puts the blocks' end after the live scrapes' time: the
Prometheus takes them through its out-of-order window (1h).
promtool, prometheus or Chromium missing fails the test: it is never
skipped. scripts/fleet-dashboard-screenshot.py takes the picture of the
docs from a larger fleet built by the same helpers."""
import gzip
import json
import os
import re
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

from dashboard_page import open_dashboard, poll
from gd_e2e import GPUDOCTOR, kill_tree
from test_prometheus_source import DCGM, STEP, gpu_values, start_prometheus
from test_serve import Serve, first_sample_scenario

STALE_S = 150
HOSTILE_MODEL = "<img src=x onerror=alert(1)>"
# How long the fleet may take to show every node: Prometheus' first scrapes
# of the live serve, then a round (every 5 s) of the serve under test.
SETTLE_S = 60


class Node:
    """A backfilled node: its GPUs' util, how long ago its series end (0:
    they run 10 minutes past now), the GPU with double-bit ECC errors."""

    def __init__(self, name, utils, ended_s=0, dbe_gpu=None, hot=False, model=None):
        self.name, self.utils, self.ended_s = name, utils, ended_s
        self.dbe_gpu, self.hot, self.model = dbe_gpu, hot, model


NODES = [Node("gpu-ok-1", [97, 12]), Node("gpu-ok-2", [45, 88]),
         Node("gpu-ecc", [98, 64], dbe_gpu=1, model=HOSTILE_MODEL),
         Node("gpu-stale", [30, 31], ended_s=STALE_S)]
LIVE = "gpu-live"


def exposition(now, nodes, history_s=1800):
    start = (now - history_s) // STEP * STEP
    out = []
    for name, typ, _help in DCGM:
        out.append(f"# TYPE {name} {typ}")
        for k, node in enumerate(nodes):
            end = now - node.ended_s if node.ended_s else now + 600
            model = node.model or "NVIDIA H100 80GB HBM3"
            for gpu, util in enumerate(node.utils):
                labels = (f'gpu="{gpu}",UUID="GPU-{node.name}-{gpu}",device="nvidia{gpu}",'
                          f'modelName={json.dumps(model)},Hostname="{node.name}",'
                          f'instance="10.3.{k // 200}.{k % 200 + 1}:9400",job="dcgm-exporter"')
                for i, t in enumerate(range(start, end + 1, STEP)):
                    v = gpu_values(node.hot, i)
                    v["DCGM_FI_DEV_GPU_UTIL"] = util
                    # Memory at most 60% used: no memory-pressure over
                    # the 10-minute window the fleet judges.
                    v["DCGM_FI_DEV_FB_USED"] = 500 * util
                    v["DCGM_FI_DEV_FB_FREE"] = 81_000 - 500 * util
                    if gpu == node.dbe_gpu:
                        v["DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"] = 2
                    out.append(f"{name}{{{labels}}} {v[name]} {t}")
    out.append("# EOF")
    return "\n".join(out) + "\n"


def prometheus_config(live_addr):
    return f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
storage:
  tsdb:
    out_of_order_time_window: 1h
scrape_configs:
  - job_name: gpudoctor
    static_configs:
      - targets: ['{live_addr}']
"""


def http_get(url, timeout=10):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def prom_query(url, expr):
    q = urllib.parse.urlencode({"query": expr})
    status, body = http_get(f"{url}/api/v1/query?{q}")
    return json.loads(body)["data"]["result"] if status == 200 else []


class FleetSetup:
    """The live serve, and a Prometheus backfilled with `nodes` that
    scrapes it; stopped by stop()."""

    def __init__(self, tmp, nodes, history_s=1800):
        self.tmp = tmp
        scenario, _, _ = first_sample_scenario(tmp)
        self.live = Serve(scenario, ["--no-db", "--hostname", LIVE], tmp)
        self.live_addr = f"{self.live.host}:{self.live.port}"
        self.prom = None
        try:
            self.prom, self.url, self.log = start_prometheus(
                tmp, exposition(int(time.time()), nodes, history_s),
                prometheus_config(self.live_addr))
            ok, _ = poll(lambda: prom_query(self.url, f'gpudoctor_build_info{{Hostname="{LIVE}"}}'),
                         bool, SETTLE_S, every=0.5)
            if not ok:
                raise AssertionError("Prometheus did not scrape the live serve: " +
                                     open(os.path.join(tmp, "prometheus.log")).read()[-2000:])
        except BaseException:
            self.stop()
            raise

    def stop(self):
        if self.prom:
            kill_tree(self.prom)
            self.log.close()
        self.live.kill()


# The Fleet page's rows as the user sees them.
ROWS_JS = """JSON.stringify([...document.querySelectorAll('#fleet-grid tr.fleet-node')].map(r => ({
  name: r.dataset.node, status: r.dataset.status, greyed: r.classList.contains('greyed'),
  text: r.querySelector('td.status').textContent, worst: r.querySelector('td.worst').textContent,
  n: r.querySelector('td.count').textContent, gpus: r.querySelector('td.gpus').textContent,
  href: (r.querySelector('a.node-link') || {}).href || null,
  cells: [...r.querySelectorAll('.gpu-cell')].map(c => ({util: c.dataset.util, text: c.textContent,
    cls: c.className}))})))"""


class FleetDashboard(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmpdir = tempfile.TemporaryDirectory()
        cls.fleet = FleetSetup(cls.tmpdir.name, NODES)

    @classmethod
    def tearDownClass(cls):
        cls.fleet.stop()
        cls.tmpdir.cleanup()

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def open_fleet_page(self):
        scenario, _, _ = first_sample_scenario(self.tmp.name)
        server, page = open_dashboard(self, scenario, ["--no-db", "--fleet-prometheus", self.fleet.url])
        # The tab shows itself with the live stream's first "fleet" event.
        page.wait_for("!document.getElementById('tab-fleet').hidden", timeout=20)
        page.evaluate("document.getElementById('tab-fleet').click()")
        page.wait_for("!document.getElementById('fleet-page').hidden")
        return server, page

    def rows(self, page):
        return json.loads(page.evaluate(ROWS_JS))

    def wait_rows(self, page, cond, timeout=SETTLE_S):
        ok, rows = poll(lambda: self.rows(page), cond, timeout, every=0.2)
        self.assertTrue(ok, f"rows: {rows}")
        return rows

    def every_node(self, rows):
        return sorted(r["name"] for r in rows) == sorted([n.name for n in NODES] + [LIVE])

    def test_every_node_worst_first_the_stale_one_marked_and_the_live_one_linked(self):
        server, page = self.open_fleet_page()
        rows = self.wait_rows(page, self.every_node)
        by = {r["name"]: r for r in rows}

        # The critical node first, with its finding, as top lists it.
        self.assertEqual(rows[0]["name"], "gpu-ecc", rows)
        self.assertIn("CRIT", rows[0]["worst"])
        self.assertIn("ecc-uncorrectable", rows[0]["worst"])
        self.assertEqual(rows[0]["status"], "ok")
        self.assertEqual([c["text"] for c in rows[0]["cells"]], ["98", "64"])

        stale = by["gpu-stale"]
        self.assertEqual(stale["status"], "stale")
        self.assertRegex(stale["text"], r"^stale [23]m$")
        self.assertTrue(stale["greyed"])
        self.assertNotIn("ecc", stale["worst"])
        for name in ("gpu-ok-1", "gpu-ok-2", LIVE):
            self.assertRegex(by[name]["text"], r"^ok \d+s$", by[name])
            self.assertFalse(by[name]["greyed"])
        self.assertEqual(by["gpu-ok-1"]["gpus"], "2")
        self.assertEqual(by[LIVE]["gpus"], "4")

        # The live serve's node links to that serve (where Prometheus scrapes
        # it); nodes scraped only through dcgm-exporter link nowhere.
        self.assertEqual(by[LIVE]["href"], f"http://{self.fleet.live_addr}/")
        for name in ("gpu-ok-1", "gpu-ok-2", "gpu-ecc", "gpu-stale"):
            self.assertIsNone(by[name]["href"], name)
        # The link opens that serve's dashboard, the one of gpu-live.
        status, html = http_get(by[LIVE]["href"])
        self.assertEqual(status, 200)
        self.assertIn("<title>gpudoctor</title>", html)
        status, body = http_get(by[LIVE]["href"] + "api/v1/status")
        self.assertEqual(json.loads(body)["header"]["host"]["hostname"], LIVE)

        # A node's row opens its findings (summary and evidence) and what
        # was not judged.
        page.evaluate("document.querySelector('tr[data-node=\"gpu-ecc\"] button.fold').click()")
        detail = page.wait_for("(document.querySelector('tr[data-open=\"gpu-ecc\"]') || {}).textContent")
        self.assertIn("ecc-uncorrectable", detail)
        self.assertIn("GPU 1", detail)
        self.assertIn("Not judged", detail)
        # Opened, that list stays open when the next refresh redraws the row.
        page.evaluate("(window.gdOpened = document.querySelector("
                      "'tr[data-open=\"gpu-ecc\"] .not-judged')).open = true")
        page.wait_for("document.querySelector('tr[data-open=\"gpu-ecc\"] .not-judged') !== window.gdOpened",
                      timeout=SETTLE_S)
        self.assertTrue(page.evaluate("document.querySelector('tr[data-open=\"gpu-ecc\"] .not-judged').open"))
        # Judged over its last 10 minutes, read from Prometheus at start, as
        # top's node view says it.
        window = page.wait_for("(t => t && t.includes('scrapes (') ? t : '')((document.querySelector("
                               "'tr[data-open=\"gpu-ecc\"] .fleet-window') || {}).textContent)",
                               timeout=SETTLE_S)
        m = re.search(r"its last (\d+) scrapes \((9|10)m\)", window)
        self.assertTrue(m, window)
        self.assertGreaterEqual(int(m.group(1)), 39, window)
        summary = page.evaluate("document.querySelector('tr[data-open=\"gpu-ecc\"] "
                                ".finding[data-id=\"ecc-uncorrectable\"] .summary').textContent")
        # The model name in it is markup from Prometheus: shown as text.
        self.assertIn(f"({HOSTILE_MODEL})", summary)
        self.assertEqual(page.evaluate("document.querySelectorAll('#fleet-page img').length"), 0)

        # Coloured by finding: the GPU the finding names takes its colour.
        page.evaluate("document.querySelector('#fleet-colour button[data-value=\"finding\"]').click()")
        rows = self.wait_rows(page, lambda rs: rs and "sev-" in rs[0]["cells"][0]["cls"], timeout=10)
        self.assertIn("sev-critical", rows[0]["cells"][1]["cls"])
        self.assertIn("sev-none", rows[0]["cells"][0]["cls"])

        # The filter, as top's `/`: by node name, or by a finding's id.
        def filter_by(text):
            page.evaluate(f"(() => {{ const f = document.getElementById('fleet-filter');"
                          f" f.value = {json.dumps(text)}; f.dispatchEvent(new Event('input')); }})()")
        filter_by("OK-2")
        self.wait_rows(page, lambda rs: [r["name"] for r in rs] == ["gpu-ok-2"], timeout=10)
        filter_by("uncorrectable")
        self.wait_rows(page, lambda rs: [r["name"] for r in rs] == ["gpu-ecc"], timeout=10)
        filter_by("")
        self.wait_rows(page, self.every_node, timeout=10)

        # The next round (every 5 s) reaches the page by the live stream's
        # "fleet" event, and the page fetches it.
        asked = len(page.requests("/api/v1/fleet"))
        first = page.evaluate("document.getElementById('fleet-text').textContent")
        page.wait_for(f"document.getElementById('fleet-text').textContent != {json.dumps(first)}",
                      timeout=20)
        self.assertGreater(len(page.requests("/api/v1/fleet")), asked)

        # The markup stayed text: nothing ran, nothing broke.
        self.assertEqual(page.dialogs(), [])
        self.assertEqual(page.errors(), [])

    def test_the_api_gives_the_figures_the_page_shows(self):
        server, page = self.open_fleet_page()
        self.wait_rows(page, self.every_node)

        def both():
            api = server.get_json("/api/v1/fleet")[1]
            return api, self.rows(page)

        def same(pair):
            api, rows = pair
            if [n["name"] for n in api["nodes"]] != [r["name"] for r in rows]:
                return False
            for n, r in zip(api["nodes"], rows):
                if n["status"] != r["status"] or str(n["findings_count"] or "") != r["n"]:
                    return False
                if [g["util_pct"] for g in n["gpus"]] != [float(c["util"]) for c in r["cells"]]:
                    return False
            return True

        ok, (api, rows) = poll(both, same, 30, every=0.5)
        self.assertTrue(ok, f"api {api} page {rows}")
        self.assertEqual(api["source"], self.fleet.url)
        self.assertIsNone(api["error"])
        self.assertEqual(api["nodes_left_out"], 0)
        ecc = api["nodes"][0]
        self.assertEqual(ecc["name"], "gpu-ecc")
        self.assertEqual((ecc["worst_id"], ecc["worst_severity"]), ("ecc-uncorrectable", "critical"))
        self.assertEqual(ecc["findings"][0]["gpus"], [1])
        self.assertEqual(ecc["gpus"][1]["mem_used_bytes"], 500 * 64 * 1024 * 1024)
        live = next(n for n in api["nodes"] if n["name"] == LIVE)
        self.assertEqual(live["dashboard"], f"http://{self.fleet.live_addr}/")
        self.assertEqual(next(n for n in api["nodes"] if n["name"] == "gpu-stale")["status"], "stale")
        # The page's browser asks for gzip and gets it: the same reply, smaller.
        req = urllib.request.Request(f"http://{server.host}:{server.port}/api/v1/fleet",
                                     headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(req, timeout=10) as r:
            self.assertEqual(r.headers.get("Content-Encoding"), "gzip")
            self.assertIn("Accept-Encoding", r.headers.get("Vary", ""))
            packed = r.read()
        zipped = json.loads(gzip.decompress(packed))
        self.assertEqual([n["name"] for n in zipped["nodes"]][:1], ["gpu-ecc"])
        self.assertLess(len(packed), len(json.dumps(zipped)) / 3)

    def test_without_a_prometheus_there_is_no_fleet(self):
        scenario, _, _ = first_sample_scenario(self.tmp.name)
        server, page = open_dashboard(self, scenario, ["--no-db"])
        status, doc = server.get_json("/api/v1/fleet")
        self.assertEqual(status, 404)
        self.assertIn("not given a Prometheus", doc["error"])
        self.assertIn("--fleet-prometheus", doc["error"])
        # The page's stream sends no "fleet" event: once a sample newer than
        # those it was opened with arrives, the tab is still hidden.
        first = page.wait_for("document.getElementById('cards').dataset.t", timeout=20)
        page.wait_for(f"document.getElementById('cards').dataset.t != {json.dumps(first)}", timeout=20)
        self.assertTrue(page.evaluate("document.getElementById('tab-fleet').hidden"))
        self.assertEqual(page.errors(), [])

    def test_usage_errors(self):
        def run(*args):
            return subprocess.run([GPUDOCTOR, "serve", "--no-db"] + list(args), capture_output=True,
                                  text=True, timeout=30)
        p = run("--fleet-match", '{a="b"}')
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--fleet-prometheus", p.stderr)
        p = run("--fleet-prometheus", "ftp://x")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--fleet-prometheus", p.stderr)
        p = run("--fleet-prometheus", self.fleet.url, "--fleet-match", "{a=b}")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--fleet-match", p.stderr)
        p = run("--fleet-prometheus", self.fleet.url, "--fleet-ca-file", "/etc/hostname")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--fleet-ca-file is for an https://", p.stderr)


if __name__ == "__main__":
    unittest.main()
