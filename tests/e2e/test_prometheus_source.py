"""A fleet diagnosed from the Prometheus it already has, end to end: an hour
of two nodes' dcgm-exporter and node_exporter series, written in their own
exposition (names, labels, # TYPE lines, as OpenMetrics ending in # EOF),
backfilled with `promtool tsdb create-blocks-from openmetrics` into a real
Prometheus (the Debian package), then `gpudoctor export --prometheus` for
each node and `gpudoctor diagnose --from` on what it wrote, and `gpudoctor
diagnose --prometheus` over the whole fleet, also as an HTML page (--html)
opened in a headless Chromium:

  node-hot  GPU 0 busy at 89 C with its SM clock held at 1200 MHz by
            sw_thermal_slowdown (bit 0x20); GPU 1 busy and cool
            -> thermal-throttling on GPU 0, nothing on GPU 1
  node-ok   two busy, cool GPUs, an idle-ish host -> no warning or critical

promtool, prometheus, chromium or python3-websocket missing fails the test:
it is never skipped.
"""
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

from gd_e2e import GPUDOCTOR, kill_tree

PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
STEP = 15
HOUR = 3600
MiB = 1024 * 1024

# dcgm-exporter's families (etc/default-counters.csv): name, TYPE, help.
# Its counters are not named *_total, which OpenMetrics wants of a counter,
# so they are written as `unknown`: Prometheus stores every type alike.
DCGM = [
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
    ("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."),
    ("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "unknown",
     "Total energy consumption since boot (in mJ)."),
    ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "unknown", "Total number of PCIe retries."),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "unknown",
     "Total number of double-bit volatile ECC errors."),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"),
    ("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge",
     "Current clock throttle reasons (bitmask of DCGM_CLOCKS_THROTTLE_REASON_*)"),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge",
     "Ratio of time the graphics engine is active."),
    ("DCGM_FI_PROF_SM_ACTIVE", "gauge",
     "The ratio of cycles an SM has at least 1 warp assigned."),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge",
     "Ratio of cycles the tensor (HMMA) pipe is active."),
]


def gpu_values(hot, i):
    """One GPU's values at step i: busy, and either held down by heat or
    cool at full clocks."""
    return {
        "DCGM_FI_DEV_SM_CLOCK": 1200 if hot else 1980,
        "DCGM_FI_DEV_MEM_CLOCK": 2619,
        "DCGM_FI_DEV_MEMORY_TEMP": 84 if hot else 55,
        "DCGM_FI_DEV_GPU_TEMP": 89 if hot else 58,
        "DCGM_FI_DEV_POWER_USAGE": 420.5 if hot else 610.25,
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": 9_000_000_000 + i * STEP * 600_000,
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": 0,
        "DCGM_FI_DEV_GPU_UTIL": 98,
        "DCGM_FI_DEV_MEM_COPY_UTIL": 45,
        "DCGM_FI_DEV_XID_ERRORS": 0,
        "DCGM_FI_DEV_FB_FREE": 41_000,
        "DCGM_FI_DEV_FB_USED": 40_000,
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": 0,
        "DCGM_FI_DEV_ROW_REMAP_FAILURE": 0,
        # NVML's nvmlClocksThrottleReasonSwThermalSlowdown.
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": 0x20 if hot else 0,
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE": 0.97,
        "DCGM_FI_PROF_SM_ACTIVE": 0.91,
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": 0.52,
    }


# node_exporter: per CPU and mode, seconds per 15 s step (they add to 15).
CPU_MODES = {"user": 4.0, "nice": 0.0, "system": 1.0, "idle": 9.7, "iowait": 0.1,
             "irq": 0.1, "softirq": 0.1, "steal": 0.0}
CPUS = 8


def exposition(nodes, times, model="NVIDIA H100 80GB HBM3"):
    """OpenMetrics text of every node's series at `times`, the GPUs' model
    name `model`."""
    out = []

    def family(name, typ, help_text, rows):
        out.append(f"# HELP {name} {help_text}")
        out.append(f"# TYPE {name} {typ}")
        for labels, series_name, values in rows:
            body = ",".join(f'{k}="{v}"' for k, v in labels)
            for t, v in zip(times, values):
                out.append(f"{series_name}{{{body}}} {v} {t}")

    for name, typ, help_text in DCGM:
        rows = []
        for n, (node, hot_gpus) in enumerate(nodes.items()):
            for gpu in (0, 1):
                labels = [("gpu", gpu), ("UUID", f"GPU-{node}-{gpu}"),
                          ("device", f"nvidia{gpu}"),
                          ("modelName", model),
                          ("Hostname", node), ("DCGM_FI_DRIVER_VERSION", "535.129.03"),
                          # dcgm-exporter is scraped at its pod's address.
                          ("instance", f"10.1.0.{n + 1}:9400"),
                          ("job", "dcgm-exporter"),
                          # A label --match can pick nodes by.
                          ("cluster", "hot" if hot_gpus else "cool")]
                values = [gpu_values(gpu in hot_gpus, i)[name] for i in range(len(times))]
                rows.append((labels, name, values))
        family(name, typ, help_text, rows)

    def node_rows(fn):
        return [([("instance", f"{node}:9100"), ("job", "node")] + extra, series, values)
                for node in nodes for extra, series, values in fn(node)]

    family("node_cpu_seconds", "counter", "Seconds the CPUs spent in each mode.",
           node_rows(lambda node: [
               ([("cpu", c), ("mode", m)], "node_cpu_seconds_total",
                [100000 + per * i for i in range(len(times))])
               for c in range(CPUS) for m, per in CPU_MODES.items()]))
    for name, value in (("node_memory_MemTotal_bytes", 512 * 1024 * MiB),
                        ("node_memory_MemAvailable_bytes", 400 * 1024 * MiB),
                        ("node_memory_SwapTotal_bytes", 0),
                        ("node_memory_SwapFree_bytes", 0),
                        ("node_load1", 4.5)):
        family(name, "gauge", "node_exporter gauge.",
               node_rows(lambda node, v=value: [([], name, [v] * len(times))]))
    for name in ("node_vmstat_pswpin", "node_vmstat_pswpout"):
        family(name, "unknown", "/proc/vmstat information field.",
               node_rows(lambda node, n=name: [([], n, [0] * len(times))]))
    family("node_disk_io_time_seconds", "counter", "Total seconds spent doing I/Os.",
           node_rows(lambda node: [([("device", "nvme0n1")],
                                    "node_disk_io_time_seconds_total",
                                    [500 + 0.3 * i for i in range(len(times))])]))
    for res in ("cpu", "memory", "io"):
        family(f"node_pressure_{res}_waiting_seconds", "counter",
               f"Total time in seconds that processes have waited for {res}.",
               node_rows(lambda node: [([], f"node_pressure_{res}_waiting_seconds_total",
                                        [10 + 0.01 * i for i in range(len(times))])]))
    out.append("# EOF")
    return "\n".join(out) + "\n"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_prometheus(d, openmetrics, config=None):
    """A Prometheus on a free loopback port serving `openmetrics`,
    backfilled with promtool into a TSDB under `d`: (process, URL, log).
    `config`: its prometheus.yml (default: nothing scraped)."""
    if not PROMETHEUS or not PROMTOOL:
        raise AssertionError("prometheus and promtool not installed (Debian "
                             "package 'prometheus')")
    om = os.path.join(d, "fleet.om")
    with open(om, "w") as f:
        f.write(openmetrics)
    tsdb = os.path.join(d, "tsdb")
    p = subprocess.run([PROMTOOL, "tsdb", "create-blocks-from", "openmetrics", om, tsdb],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError(f"promtool: {p.stdout}{p.stderr}")
    port = free_port()
    cfg = os.path.join(d, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write(config or "global:\n  scrape_interval: 1h\nscrape_configs: []\n")
    log = open(os.path.join(d, "prometheus.log"), "w")
    prom = subprocess.Popen(
        [PROMETHEUS, f"--config.file={cfg}", f"--storage.tsdb.path={tsdb}",
         f"--web.listen-address=127.0.0.1:{port}",
         "--storage.tsdb.retention.time=30d", "--log.level=warn"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        try:
            with urllib.request.urlopen(url + "/-/ready", timeout=2) as r:
                if r.status == 200:
                    return prom, url, log
        except OSError:
            pass
        if time.time() > deadline or prom.poll() is not None:
            kill_tree(prom)
            log.close()
            raise AssertionError("prometheus did not start: " +
                                 open(os.path.join(d, "prometheus.log")).read()[-2000:])
        time.sleep(0.3)


class FailingProxy:
    """Forwards to a Prometheus, but answers a query_range or a remote read
    about `node` with a server error: one node whose window cannot be
    read."""

    def __init__(self, upstream, node):
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.forward(b"")

            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                self.forward(self.rfile.read(n))

            def forward(self, body):
                # A remote read's body is snappy-compressed protobuf, whose
                # strings are short enough to stay literal bytes.
                asked = urllib.parse.unquote_plus(self.path + "?" +
                                                  body.decode("latin-1"))
                if ("/api/v1/query_range" in self.path or
                        "/api/v1/read" in self.path) and node in asked:
                    proxy.failed += 1
                    self.answer(500, b'{"status":"error","errorType":"internal",'
                                     b'"error":"injected failure"}')
                    return
                req = urllib.request.Request(
                    upstream + self.path, data=body or None, method=self.command,
                    headers={k: v for k, v in self.headers.items()
                             if k.lower() in ("content-type", "accept",
                                              "content-encoding",
                                              "x-prometheus-remote-read-version")})
                try:
                    with urllib.request.urlopen(req, timeout=30) as r:
                        self.answer(r.status, r.read(), r.headers["Content-Type"])
                except urllib.error.HTTPError as e:
                    self.answer(e.code, e.read())

            def answer(self, code, data, content_type="application/json"):
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.failed = 0
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def gd(*args, timeout=180):
    return subprocess.run([GPUDOCTOR] + list(args), capture_output=True, text=True,
                          timeout=timeout)


class PrometheusSource(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not PROMETHEUS or not PROMTOOL:
            raise AssertionError("prometheus and promtool not installed (Debian "
                                 "package 'prometheus')")
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        # An hour ending two minutes ago, on the 15 s grid: well inside the
        # retention the server is started with, whatever the clock says.
        end = (int(time.time()) - 120) // STEP * STEP
        cls.start = end - HOUR
        cls.end = end
        times = list(range(cls.start, end + 1, STEP))
        cls.prom, cls.url, cls.log = start_prometheus(
            d, exposition({"node-hot": {0}, "node-ok": set()}, times))

    @classmethod
    def tearDownClass(cls):
        kill_tree(cls.prom)
        cls.log.close()
        cls.tmp.cleanup()

    def export(self, node, *extra):
        out = os.path.join(self.tmp.name, f"{node}.jsonl")
        p = gd("export", "--prometheus", self.url, "--node", node,
               "--since", str(self.start), "--until", str(self.end), "--step", "15s",
               "-o", out, *extra)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"exported {HOUR // STEP + 1} samples of {node}", p.stderr)
        with open(out) as f:
            lines = [json.loads(l) for l in f if l.strip()]
        return out, lines[0], lines[1:]

    def findings(self, trace):
        p = gd("diagnose", "--from", trace, "--json")
        self.assertIn(p.returncode, (0, 1, 2), p.stderr)
        return json.loads(p.stdout)["findings"]

    def test_remote_read_gives_the_window_query_range_gives(self):
        # The GPU series read raw (remote read) and put on the grid are the
        # range queries' answer, value for value; the host shares are the
        # same sums in another order.
        remote, header_r, samples_r = self.export("node-hot", "--read", "remote-read")
        ranged, header_q, samples_q = self.export("node-hot", "--read", "query-range")
        self.assertEqual(header_r, header_q)
        self.assertEqual(len(samples_r), len(samples_q))
        self.assertTrue(any(s["gpus"] for s in samples_r))
        for a, b in zip(samples_r, samples_q):
            self.assertEqual((a["t"], a.get("gpus"), a.get("events")),
                             (b["t"], b.get("gpus"), b.get("events")))
            self.assertEqual(sorted(a.get("host", {})), sorted(b.get("host", {})))
            for k, v in a.get("host", {}).items():
                self.assertAlmostEqual(v, b["host"][k], places=6)
        # auto reads remote while the server answers it: no fallback said.
        out = os.path.join(self.tmp.name, "auto.jsonl")
        p = gd("export", "--prometheus", self.url, "--node", "node-hot",
               "--since", str(self.start), "--until", str(self.end), "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("remote read not answered", p.stderr)
        bad = gd("export", "--prometheus", self.url, "--node", "node-hot",
                 "--read", "sometimes", "-o", out)
        self.assertEqual(bad.returncode, 2)
        self.assertEqual(len(bad.stderr.strip().splitlines()), 1, bad.stderr)
        self.assertIn("--read", bad.stderr)

    def test_the_throttled_node_is_found_thermally_throttled(self):
        trace, header, samples = self.export("node-hot")
        self.assertEqual(header["host"]["hostname"], "node-hot")
        self.assertEqual([g["uuid"] for g in header["gpus"]],
                         ["GPU-node-hot-0", "GPU-node-hot-1"])
        self.assertEqual(header["gpus"][0]["memory_total_bytes"], 81_000 * MiB)
        self.assertEqual(samples[0]["t"], self.start)
        self.assertEqual(samples[-1]["t"], self.end)
        g0 = samples[10]["gpus"][0]
        self.assertEqual(g0["clock_event_reasons"], ["sw_thermal_slowdown"])
        self.assertEqual((g0["temp_c"], g0["sm_clock_mhz"], g0["util_pct"]), (89, 1200, 98))
        self.assertEqual(g0["mem_used_bytes"], 40_000 * MiB)
        self.assertAlmostEqual(g0["power_w"], 420.5)
        self.assertEqual(samples[10]["gpus"][1]["clock_event_reasons"], [])
        host = samples[10]["host"]
        # (4 + 1 + 0.1 + 0.1) s busy of 15 s per CPU.
        self.assertAlmostEqual(host["cpu_util_pct"], 100 * 5.2 / 15, places=3)
        self.assertAlmostEqual(host["mem_available_bytes"], 400 * 1024 * MiB)
        # Nothing here exports fans, P-states or processes: unknown (null),
        # not zero.
        self.assertIsNone(g0["fan_pct"])
        self.assertIsNone(g0["pstate"])
        self.assertIsNone(g0["processes"])

        found = self.findings(trace)
        thermal = [f for f in found if f["id"] == "thermal-throttling"]
        self.assertEqual(len(thermal), 1, found)
        self.assertEqual(thermal[0]["gpus"], [0], thermal)
        self.assertIn(thermal[0]["severity"], ("warning", "critical"))

    def test_the_healthy_node_has_no_warning(self):
        trace, header, samples = self.export("node-ok")
        self.assertEqual(len(header["gpus"]), 2)
        found = self.findings(trace)
        bad = [f for f in found if f["severity"] in ("warning", "critical")]
        self.assertEqual(bad, [])

    def test_diagnose_loops_over_the_fleets_nodes(self):
        # The backfilled hour ends two minutes ago: a window of 70 min holds
        # it.
        p = gd("diagnose", "--prometheus", self.url, "--duration", "70m", "--json")
        self.assertEqual(p.returncode, 1, p.stderr)  # the worst node: a warning
        nodes = {n["node"]: n["report"]["findings"] for n in json.loads(p.stdout)["nodes"]}
        self.assertEqual(sorted(nodes), ["node-hot", "node-ok"])
        hot = [(f["id"], f["gpus"]) for f in nodes["node-hot"]
               if f["severity"] in ("warning", "critical")]
        self.assertEqual(hot, [("thermal-throttling", [0])])
        self.assertEqual([f for f in nodes["node-ok"]
                          if f["severity"] in ("warning", "critical")], [])
        text = gd("diagnose", "--prometheus", self.url, "--duration", "70m")
        self.assertIn("== node-hot ==", text.stdout)
        self.assertIn("== node-ok ==", text.stdout)
        bad = gd("diagnose", "--prometheus", "ftp://x")
        self.assertEqual(bad.returncode, 2, bad.stderr)
        self.assertEqual(len(bad.stderr.strip().splitlines()), 1, bad.stderr)

    def window(self):
        return ("--since", str(self.start), "--until", str(self.end), "--step", "15s")

    def fleet_json(self, *args, url=None):
        p = gd("diagnose", "--prometheus", url or self.url, *self.window(), "--json",
               *args)
        return p, (json.loads(p.stdout) if p.stdout.strip() else None)

    def test_the_fleet_summary(self):
        p, out = self.fleet_json()
        self.assertEqual(p.returncode, 1, p.stderr)
        s = out["summary"]
        self.assertEqual(s["checked"], 2)
        self.assertEqual(s["not_checked"], [])
        by_id = {f["id"]: f["nodes"] for f in s["findings"]}
        self.assertEqual(by_id.get("thermal-throttling"), 1, s)
        self.assertEqual([w["node"] for w in s["worst"]], ["node-hot"], s)
        self.assertEqual(s["worst"][0]["exit_code"], 1)
        # No kernel log from Prometheus: judged on no node.
        nj = {(n["id"], n["nodes"]) for n in s["not_judged"]}
        self.assertIn(("xid-error", 2), nj, s)
        self.assertTrue(all(n["reason"] for n in s["not_judged"]), s)
        text = gd("diagnose", "--prometheus", self.url, *self.window())
        self.assertEqual(text.returncode, 1, text.stderr)
        summary = text.stdout.split("== fleet ==\n", 1)[1]
        self.assertIn("nodes checked: 2 of 2", summary)
        self.assertRegex(summary, r"thermal-throttling +1\n")
        self.assertRegex(summary, r"worst nodes:\n +node-hot +warning")
        self.assertRegex(summary, r"xid-error +2: ")

    def test_html_report_renders_offline(self):
        page = os.path.join(self.tmp.name, "fleet.html")
        p = gd("diagnose", "--prometheus", self.url, *self.window(), "--html", page)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("== node-hot ==", p.stdout)  # the text report as before
        with open(page, encoding="utf-8") as f:
            html = f.read()
        # Self-contained: nothing to fetch, uPlot inlined.
        self.assertIsNone(re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html,
                                    re.I), "external reference in the page")
        self.assertNotRegex(html, r"<link\b")
        self.assertIn("uPlot", html)
        self.assertLess(len(html), 2_000_000)
        # Here, not at the top: test_victoria_metrics imports this module.
        # Missing, python3-websocket fails this test (cdp.py raises).
        from cdp import Browser
        browser = Browser()
        try:
            tab = browser.new_page()
            tab.navigate("file://" + page)
            tab.wait_for("document.readyState === 'complete'")
            # uPlot drew the hot node's charts (temperature and SM clock).
            charts = tab.wait_for("""(() => {
                const s = [...document.querySelectorAll('section.node')]
                    .find(e => e.querySelector('h3').textContent === 'node-hot');
                const u = s ? s.querySelectorAll('.chart .uplot canvas') : [];
                return u.length >= 2 ? u.length : 0; })()""")
            self.assertGreaterEqual(charts, 2)
            got = tab.evaluate("""(() => {
                const rows = [...document.querySelectorAll('#heatmap tr.heat-row')];
                const heat = {};
                rows.forEach(r => heat[r.querySelector('th').textContent] =
                    [...r.querySelectorAll('td')].map(td => td.className));
                const findings = [...document.querySelectorAll('#findings tr.finding')]
                    .map(r => [r.cells[0].textContent, r.cells[1].textContent,
                               r.cells[2].textContent]);
                const titles = [...document.querySelectorAll('.uplot .u-title')]
                    .map(e => e.textContent);
                return {heat, findings, titles};
            })()""")
            self.assertEqual(sorted(got["heat"]), ["node-hot", "node-ok"], got)
            hot = got["heat"]["node-hot"]
            self.assertEqual(len(hot), 96)
            self.assertTrue(any(re.search(r"\bs[23]\b", c) for c in hot), hot)
            self.assertFalse(any(re.search(r"\bs[23]\b", c)
                                 for c in got["heat"]["node-ok"]), got["heat"]["node-ok"])
            thermal = [f for f in got["findings"]
                       if f[:2] == ["node-hot", "thermal-throttling"]]
            self.assertEqual(len(thermal), 1, got["findings"])
            self.assertIn(thermal[0][2], ("warning", "critical"))
            # The most severe finding is first.
            self.assertIn(got["findings"][0][2], ("warning", "critical"))
            self.assertIn("GPU temperature (°C)", got["titles"])
            self.assertIn("SM clock (MHz)", got["titles"])
            self.assertEqual(tab.errors(), [])
            self.assertEqual([u for u in tab.requests()
                              if not u.startswith(("file:", "data:", "about:"))], [])
            tab.close()
        finally:
            browser.close()
        size = os.path.getsize(page)
        print(f"\nfleet.html: {size} bytes for 2 nodes", flush=True)

    def test_html_escapes_hostile_label_values(self):
        # A model name (a label value, shown in the finding's title) that
        # is markup: it must come out as text, run nothing, fetch nothing.
        hostile = ("<img src=x onerror=alert(1)></td><script>alert(2)</script>"
                   "<a href='https://evil.example/'>")
        d = os.path.join(self.tmp.name, "hostile")
        os.mkdir(d)
        times = list(range(self.start, self.end + 1, STEP))
        prom, url, log = start_prometheus(d, exposition({"node-hot": {0}}, times,
                                                        model=hostile))
        try:
            page = os.path.join(d, "fleet.html")
            p = gd("diagnose", "--prometheus", url, *self.window(), "--html", page)
            self.assertEqual(p.returncode, 1, p.stderr)
        finally:
            kill_tree(prom)
            log.close()
        with open(page, encoding="utf-8") as f:
            html = f.read()
        self.assertNotIn("<img", html)
        self.assertNotIn("evil.example/'>", html)
        self.assertIn("&lt;img src=x onerror=alert(1)&gt;", html)
        from cdp import Browser
        browser = Browser()
        try:
            tab = browser.new_page()
            tab.navigate("file://" + page)
            tab.wait_for("document.querySelectorAll('.uplot').length >= 2")
            got = tab.evaluate("""(() => ({
                imgs: document.querySelectorAll('img').length,
                links: [...document.querySelectorAll('a')].map(a => a.getAttribute('href')),
                scripts: document.querySelectorAll('script').length,
                title: document.querySelector('#findings tr.finding td:nth-child(5)')
                    .textContent}))()""")
            self.assertEqual(got["imgs"], 0, got)
            self.assertTrue(all(h.startswith("#node-") for h in got["links"]), got)
            self.assertEqual(got["scripts"], 3, got)  # data, uPlot, the page's
            self.assertIn(hostile, got["title"])
            self.assertEqual(tab.dialogs(), [])
            self.assertEqual(tab.errors(), [])
            self.assertEqual([u for u in tab.requests()
                              if not u.startswith(("file:", "data:", "about:"))], [])
            tab.close()
        finally:
            browser.close()

    def test_html_flag_errors_are_one_line(self):
        p = gd("diagnose", "--html", os.path.join(self.tmp.name, "x.html"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("--html", p.stderr)
        bad = os.path.join(self.tmp.name, "no-such-dir", "x.html")
        p = gd("diagnose", "--prometheus", self.url, *self.window(), "--html", bad)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn(bad, p.stderr)

    def test_match_narrows_the_fleet(self):
        p, out = self.fleet_json("--match", '{cluster="cool"}')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([n["node"] for n in out["nodes"]], ["node-ok"])
        self.assertEqual(out["summary"]["checked"], 1)
        p, out = self.fleet_json("--match", '{cluster=~"h.*", job!="x"}')
        self.assertEqual([n["node"] for n in out["nodes"]], ["node-hot"])
        p, _ = self.fleet_json("--match", '{cluster="nowhere"}')
        self.assertEqual(p.returncode, 3, p.stderr)
        for bad in ('cluster="a"', '{cluster="a"', '{cluster=a}', '{}',
                    '{cluster="a"} or up', '{1x="a"}', '{a=="b"}'):
            p = gd("diagnose", "--prometheus", self.url, "--match", bad)
            self.assertEqual(p.returncode, 2, (bad, p.stderr))
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, (bad, p.stderr))
            self.assertIn("--match", p.stderr)

    def test_a_node_that_fails_is_reported_and_the_others_go_on(self):
        proxy = FailingProxy(self.url, "node-ok")
        try:
            p, out = self.fleet_json(url=proxy.url)
            self.assertGreater(proxy.failed, 0)
            self.assertEqual(p.returncode, 1, p.stderr)
            nodes = {n["node"]: n for n in out["nodes"]}
            self.assertIn("injected failure", nodes["node-ok"]["error"])
            self.assertNotIn("report", nodes["node-ok"])
            self.assertIn("thermal-throttling",
                          [f["id"] for f in nodes["node-hot"]["report"]["findings"]])
            s = out["summary"]
            self.assertEqual(s["checked"], 1)
            self.assertEqual([n["node"] for n in s["not_checked"]], ["node-ok"])
            text = gd("diagnose", "--prometheus", proxy.url, *self.window())
            self.assertEqual(text.returncode, 1, text.stderr)
            self.assertRegex(text.stdout,
                             r"== node-ok ==\ncould not check: .*injected failure")
            self.assertIn("could not check 1:\n  node-ok: ", text.stdout)
        finally:
            proxy.close()
        both = FailingProxy(self.url, "node-")
        try:
            # Every node fails: nothing checked, exit 3.
            both_nodes = gd("diagnose", "--prometheus", both.url, *self.window())
            self.assertEqual(both_nodes.returncode, 0 + 3, both_nodes.stderr)
            self.assertIn("nodes checked: 0 of 2", both_nodes.stdout)
        finally:
            both.close()

    def test_concurrency_does_not_change_the_findings(self):
        def findings(n):
            p, out = self.fleet_json("--concurrency", str(n))
            self.assertEqual(p.returncode, 1, p.stderr)
            return {x["node"]: x["report"]["findings"] for x in out["nodes"]}, out["summary"]
        one, four = findings(1), findings(4)
        self.assertEqual(one, four)
        for bad in ("0", "65", "x"):
            p = gd("diagnose", "--prometheus", self.url, "--concurrency", bad)
            self.assertEqual(p.returncode, 2, (bad, p.stderr))

    def test_diagnose_takes_exports_auth_flags(self):
        token = os.path.join(self.tmp.name, "token")
        with open(token, "w") as f:
            f.write("s3cret\n")
        # Prometheus without auth ignores the header: the flags are accepted.
        p, out = self.fleet_json("--bearer-token-file", token)
        self.assertEqual(p.returncode, 1, p.stderr)
        for args in (["--basic-auth-user", "u"], ["--ca-file", "/etc/hostname"],
                     ["--bearer-token-file", "/nonexistent"],
                     ["--since", "yesterday-ish"], ["--step", "0s"],
                     ["--since", "1h", "--duration", "10m"]):
            p = gd("diagnose", "--prometheus", self.url, *args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, (args, p.stderr))
        for args in (["--match", '{a="b"}'], ["--concurrency", "2"], ["--step", "15s"]):
            p = gd("diagnose", "--from", "/etc/hostname", *args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))

    def test_an_unknown_node_and_bad_flags_are_one_line(self):
        out = os.path.join(self.tmp.name, "none.jsonl")
        p = gd("export", "--prometheus", self.url, "--node", "node-gone",
               "--since", str(self.start), "--until", str(self.end), "-o", out)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("no series of node 'node-gone'", p.stderr)
        for args in (["--node", "x"],  # no --prometheus nor --db
                     ["--prometheus", self.url],  # no --node
                     ["--prometheus", self.url, "--node", 'n1"} or up{x="'],
                     ["--prometheus", "ftp://x", "--node", "n1"],
                     ["--prometheus", self.url, "--node", "n1", "--step", "0s"],
                     ["--prometheus", self.url, "--node", "n1", "--basic-auth-user", "u"],
                     ["--prometheus", self.url, "--node", "n1", "--ca-file", "/etc/hostname"],
                     ["--db", "x.db", "--node", "n1"]):
            p = gd("export", *args, "-o", out)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, (args, p.stderr))

    def test_a_server_that_is_not_there_is_one_line(self):
        p = gd("export", "--prometheus", f"http://127.0.0.1:{free_port()}", "--node", "n1",
               "-o", os.path.join(self.tmp.name, "x.jsonl"))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)


if __name__ == "__main__":
    unittest.main()
