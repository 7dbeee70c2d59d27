"""The dashboard of `gpudoctor serve`, end to end, in a real headless
Chromium driven over the DevTools protocol: serve on the fake NVML (4 GPUs)
with real child processes on GPU 0 (a trainer with data-loader workers, and
one whose command line is an HTML injection), over a history database that
already holds two hours of samples and one alert. What a user would check:
the page loads without console errors, shows the scenario's GPUs and
values, draws charts with data, updates live within 2 s, loads history for
another range, renders the hostile name as text without running it, carries
the Content-Security-Policy, works narrow and dark, and downloads a trace
that `diagnose --from` reads. A screenshot is saved as an artifact."""
import gzip
import json
import os
import sqlite3
import subprocess
import sys
import time
import unittest
import urllib.request

from cdp import Browser
from gd_e2e import (E2E, GPUDOCTOR, load_scenario, read_trace, scenario_4gpu, self_signed_cert,
                    write_scenario)
from test_export import STORE_FILL, TRACEGEN
from test_serve import Serve

GiB = 1024 ** 3
HOSTILE = "<img src=x onerror=alert(1)>"
ARTIFACTS = os.environ.get("GD_ARTIFACTS") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(GPUDOCTOR)))), "artifacts")

# Waits; its argv[0] (its command line) is the hostile text.
HOLDER = "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(300)\n"
TRAINER = r"""
import os, time
kids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        end = time.time() + 300
        while time.time() < end:
            time.sleep(0.001)
        os._exit(0)
    kids.append(pid)
print(os.getpid(), flush=True)
time.sleep(300)
"""


def chart_state(page, chart):
    """What chart `chart` has on screen (app.js's markShown and markData)."""
    return page.evaluate(f"""(() => {{
        const d = document.querySelector('[data-chart={chart}]').dataset;
        return {{xmin: Number(d.xmin), xmax: Number(d.xmax), shownMin: Number(d.shownMin),
                 shownMax: Number(d.shownMax), width: Number(d.yaxisWidth), font: d.yaxisFont,
                 labels: JSON.parse(d.yaxisLabels || "[]")}}; }})()""")


UNIT_BYTES = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
              "PiB": 1 << 50}


def label_bytes(label):
    """'256 MiB/s' or '1.5 GiB' -> bytes."""
    number, unit = label.replace("/s", "").split()
    return round(float(number) * UNIT_BYTES[unit])


def fetch(url, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status, dict(r.headers), r.read()


class ServedPage(E2E):
    """serve on `scenario` with `args`, and a Chromium page; both closed
    after the test."""

    def open_dashboard(self, scenario, args):
        self.serve = Serve(scenario, args, self.tmp)
        self.base = f"http://{self.serve.host}:{self.serve.port}"
        self.browser = Browser()
        self.page = self.browser.new_page()

    def tearDown(self):
        self.page.close()
        self.browser.close()
        self.serve.proc.terminate()
        self.serve.proc.wait(20)
        super().tearDown()


class Dashboard(ServedPage):
    def setUp(self):
        super().setUp()
        for tool in (STORE_FILL, TRACEGEN):
            self.assertTrue(os.path.exists(tool), f"{tool} not built")
        trainer = subprocess.Popen([sys.executable, "-c", TRAINER], stdout=subprocess.PIPE,
                                   stdin=subprocess.DEVNULL, text=True)
        self.children.append(trainer)
        self.trainer = int(trainer.stdout.readline())
        hostile = subprocess.Popen([HOSTILE.encode(), b"-c", HOLDER.encode()], executable=sys.executable,
                                   stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        self.children.append(hostile)
        self.hostile = int(hostile.stdout.readline())

        # The fake replays these four samples in a loop, so values move.
        header, samples = load_scenario(scenario_4gpu())
        header["loop"] = True
        for i, s in enumerate(samples):
            s["t"] = samples[0]["t"] + i
            for g in s["gpus"]:
                if g["index"] == 0:
                    g["processes"] = [{"pid": self.trainer, "used_bytes": 20 * GiB, "type": "compute"},
                                      {"pid": self.hostile, "used_bytes": 2 * GiB, "type": "compute"}]
                    g["mem_used_bytes"] = 30 * GiB  # 8 GiB owned by no live process
                    g["util_pct"] = 50 + 10 * i
        self.scenario = write_scenario(header, samples, self.tmp.name)

        # Two hours of history before serve starts, and one alert in it.
        self.now = time.time()
        trace = os.path.join(self.tmp.name, "past.jsonl")
        subprocess.run([TRACEGEN, "--scenario", "thermal-throttling", "--gpus", "4", "--duration", "2h",
                        "--interval", "5s", "--start", str(int(self.now - 7300)), "-o", trace],
                       check=True, capture_output=True, timeout=120)
        self.db = os.path.join(self.tmp.name, "history.db")
        subprocess.run([STORE_FILL, "--db", self.db, "--trace", trace], check=True, capture_output=True,
                       timeout=120)
        con = sqlite3.connect(self.db)
        con.execute("INSERT INTO alerts(key, started_at, fired_at, resolved_at, ended, finding, severity, "
                    "gpus, title, evidence, action) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                    ("thermal-throttling/1", self.now - 3000, self.now - 2940, self.now - 2400, "resolved",
                     "thermal-throttling", "warning", "1", "GPU 1 is thermally throttled " + HOSTILE,
                     "temp 88 C", "check the airflow"))
        con.commit()
        con.close()
        self.open_dashboard(self.scenario, ["--db", self.db])

    def test_page_headers_and_assets(self):
        status, headers, body = fetch(self.base + "/", {"Accept-Encoding": "gzip"})
        self.assertEqual(status, 200)
        csp = headers.get("Content-Security-Policy", "")
        self.assertIn("script-src 'self'", csp)
        self.assertNotIn("unsafe-inline", csp)
        self.assertEqual(headers.get("X-Content-Type-Options"), "nosniff")
        self.assertEqual(headers.get("Content-Encoding"), "gzip")
        html = gzip.decompress(body).decode()
        self.assertIn("<title>gpudoctor</title>", html)
        # Every script is a same-origin file with a year-long, immutable
        # lifetime; the page itself is revalidated (304 with its ETag).
        import re
        scripts = re.findall(r'<script src="([^"]+)"', html)
        self.assertEqual(len(scripts), 2)
        for src in scripts:
            _, h, _ = fetch(self.base + src)
            self.assertIn("immutable", h.get("Cache-Control", ""))
        self.assertEqual(headers.get("Cache-Control"), "no-cache")
        req = urllib.request.Request(self.base + "/", headers={"Accept-Encoding": "gzip",
                                                               "If-None-Match": headers["ETag"]})
        try:
            urllib.request.urlopen(req, timeout=10)
            self.fail("no 304")
        except urllib.error.HTTPError as e:
            self.assertEqual(e.code, 304)

    def test_dashboard(self):
        p = self.page
        p.navigate(self.base + "/")
        # The scenario's GPUs and values.
        p.wait_for("document.querySelectorAll('.card.gpu').length === 4", 15)
        p.wait_for("document.querySelector('.card.gpu').innerText.includes('not owned')", 10)
        cards = p.evaluate("Array.from(document.querySelectorAll('.card.gpu')).map(c => c.innerText)")
        self.assertIn("NVIDIA A100-SXM4-80GB", cards[0])
        self.assertIn("NVIDIA H100 80GB HBM3", cards[2])
        self.assertIn("30.0 GiB / 80.0 GiB", cards[0])
        self.assertIn("8.0 GiB not owned by a live process", cards[0])
        self.assertIn("slowdown", cards[0])
        host = p.evaluate("document.querySelector('.card.host').innerText")
        # The host is this machine (read from /proc), with the fake's driver.
        import socket
        self.assertIn(socket.gethostname(), host)
        node = p.evaluate("document.getElementById('node').innerText")
        self.assertIn(socket.gethostname(), node)
        self.assertIn("driver 535.129.03", node)
        # The findings panel lists what serve could not judge (its kernel
        # log is not read here): never a bare "nothing wrong".
        p.wait_for("document.querySelector('#findings .not-judged') !== null", 15)
        p.evaluate("(window.gdOpened = document.querySelector('#findings .not-judged')).open = true")
        # The next evaluation redraws the panel; the list the reader opened
        # stays open.
        p.wait_for("document.querySelector('#findings .not-judged') !== window.gdOpened", 15)
        self.assertTrue(p.evaluate("document.querySelector('#findings .not-judged').open"))
        unjudged = p.evaluate("document.querySelector('#findings .not-judged').innerText")
        self.assertIn("xid-error needs the kernel log's Xid lines; not read (--kmsg none)", unjudged)
        self.assertNotIn("nothing wrong", p.evaluate("document.getElementById('findings').innerText"))

        # Charts have drawn points: the history's and the live ones.
        p.wait_for("Number(document.querySelector('[data-chart=util]').dataset.points) > 100", 15)
        painted = p.evaluate("""(() => {
            const c = document.querySelector('[data-chart=util] canvas');
            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
            return n; })()""")
        self.assertGreater(painted, 1000)
        self.assertTrue(p.evaluate("performance.getEntriesByName('gd-first-chart').length === 1"))

        # A live update within 2 s of the last one.
        t0 = p.wait_for("Number(document.getElementById('cards').dataset.t)", 10)
        t1 = p.wait_for(f"Number(document.getElementById('cards').dataset.t) > {t0} && "
                        "Number(document.getElementById('cards').dataset.t)", 2)
        self.assertGreater(t1, t0)
        self.assertIn("live", p.evaluate("document.getElementById('live-text').innerText"))

        # The range switch loads history of that range.
        before = len(p.requests("/api/v1/history?metric=gpu."))
        p.evaluate("document.querySelector('[data-range=\"6h\"]').click()")
        p.wait_for(f"document.getElementById('range-text').innerText.startsWith('last 6h')", 10)
        urls = p.requests("/api/v1/history?metric=gpu.")
        self.assertGreater(len(urls), before)
        import urllib.parse
        q = urllib.parse.parse_qs(urllib.parse.urlparse(urls[-1]).query)
        self.assertAlmostEqual(float(q["until"][0]) - float(q["since"][0]), 6 * 3600, delta=5)
        # The history starts ~2 h back: all of it is in the 6 h charts.
        xmin = p.wait_for(f"Number(document.querySelector('[data-chart=util]').dataset.xmin) < {self.now - 7000}"
                          " && Number(document.querySelector('[data-chart=util]').dataset.xmin)", 10)
        self.assertLess(xmin, self.now - 7000)
        self.assertIn("averages", p.evaluate("document.getElementById('range-text').innerText"))

        # The 6 h charts start at the history's first point (2 h back): a
        # short history fills the chart, not a sliver at its right edge.
        p.wait_for("Number(document.querySelector('[data-chart=util]').dataset.shownMin) > 0", 10)
        shown = chart_state(p, "util")
        self.assertGreater((shown["xmax"] - shown["xmin"]) / (shown["shownMax"] - shown["shownMin"]),
                           0.95, shown)
        self.check_axes(p)

        # Dragging across a chart zooms every chart to that span.
        box = p.evaluate("(() => { const el = document.querySelector('[data-chart=util] .u-over');"
                         " el.scrollIntoView(); const r = el.getBoundingClientRect();"
                         " return [r.left, r.top, r.width, r.height]; })()")
        x0, y = box[0] + box[2] * 0.3, box[1] + box[3] / 2
        x1 = box[0] + box[2] * 0.6
        before = len(p.requests("/api/v1/history?metric=gpu."))
        p.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x0, "y": y})
        p.send("Input.dispatchMouseEvent", {"type": "mousePressed", "x": x0, "y": y, "button": "left",
                                            "clickCount": 1})
        for k in range(1, 11):
            p.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x0 + (x1 - x0) * k / 10, "y": y,
                                                "button": "left", "buttons": 1})
        p.send("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x1, "y": y, "button": "left",
                                            "clickCount": 1})
        p.wait_for("!document.getElementById('range-text').innerText.startsWith('last')", 10)
        p.wait_for(f"performance.getEntriesByType('resource').filter(e => e.name.includes("
                   f"'/api/v1/history?metric=gpu.')).length > {before}", 10)
        q = urllib.parse.parse_qs(urllib.parse.urlparse(p.requests("/api/v1/history?metric=gpu.")[-1]).query)
        span = float(q["until"][0]) - float(q["since"][0])
        width = shown["shownMax"] - shown["shownMin"]
        self.assertAlmostEqual(span, 0.3 * width, delta=0.05 * width)
        p.evaluate("document.querySelector('[data-range=\"6h\"]').click()")
        p.wait_for("document.getElementById('range-text').innerText.startsWith('last 6h')", 10)

        # The findings timeline shows the stored alert; a click zooms to it.
        p.wait_for("document.querySelector('#timeline .alert') !== null", 10)
        p.evaluate("document.querySelector('#timeline .alert').click()")
        p.wait_for("!document.getElementById('range-text').innerText.startsWith('last')", 10)
        p.wait_for("document.querySelector('[data-range]').parentNode.innerText.includes('back to live')", 5)

        # Processes: the hostile command line is text, and nothing ran.
        p.wait_for(f"document.getElementById('procs').innerText.includes({json.dumps(HOSTILE)})", 15)
        self.assertEqual(p.evaluate("document.querySelectorAll('img[src=\"x\"]').length"), 0)
        self.assertEqual(p.evaluate("document.querySelectorAll('#procs img, #timeline img').length"), 0)
        self.assertEqual(p.dialogs(), [])
        rows = p.evaluate("Array.from(document.querySelectorAll('#procs tbody tr')).map(r => r.dataset.pid)")
        self.assertIn(str(self.trainer), rows)
        self.assertIn(str(self.hostile), rows)
        # No process runs in a Kubernetes pod: no POD column, as in `ps`
        # (test_pods.PodDashboard has one).
        headers = p.evaluate("Array.from(document.querySelectorAll('#procs th')).map(t => t.innerText.trim())")
        self.assertTrue(headers and headers[0].startswith("GPU"), headers)
        self.assertNotIn("POD", [h.split()[0] for h in headers if h])
        # Sorting by PID puts the smaller first.
        p.evaluate("Array.from(document.querySelectorAll('#procs th')).find(t => t.innerText.startsWith('PID')).click()")
        order = p.evaluate("Array.from(document.querySelectorAll('#procs tbody tr[data-pid]')).map(r => Number(r.dataset.pid))")
        self.assertEqual(order, sorted(order))
        # The trainer's workers are folded under it.
        workers = p.evaluate(f"document.querySelector('#procs tr[data-pid=\"{self.trainer}\"] .fold').innerText")
        self.assertIn("2", workers)

        # "Download trace" gives a zstd trace of the shown range.
        href = p.evaluate("document.getElementById('download').getAttribute('href')")
        self.assertTrue(href.startswith("/api/v1/export?"), href)
        os.makedirs(ARTIFACTS, exist_ok=True)
        shot = os.path.join(ARTIFACTS, "dashboard.png")
        p.screenshot(shot)
        self.assertGreater(os.path.getsize(shot), 20000)

        # No console errors, no CSP violations, no failed loads.
        self.assertEqual(p.errors(), [])

    def check_axes(self, p):
        """No value-axis label is wider than its axis, and a byte chart's
        ticks are round binary steps (one step between all labels, a power
        of two bytes)."""
        for chart in ("util", "mem", "power", "pcie", "hmem", "disk"):
            s = chart_state(p, chart)
            labels = s["labels"]
            if not labels:
                continue
            widest = p.evaluate(f"""(() => {{
                const ctx = document.createElement('canvas').getContext('2d');
                ctx.font = {json.dumps(s["font"])};
                return Math.max(...{json.dumps(labels)}.map(l => ctx.measureText(l).width))
                    / devicePixelRatio; }})()""")
            self.assertLessEqual(widest + 10, s["width"], (chart, labels, s["width"]))
            if chart in ("mem", "pcie", "hmem", "disk"):
                values = [label_bytes(l) for l in labels]
                steps = {b - a for a, b in zip(values, values[1:])}
                self.assertEqual(len(steps), 1, (chart, labels))
                step = steps.pop()
                self.assertEqual(step & (step - 1), 0, (chart, labels))

    def test_download_trace_reads_back(self):
        url = self.base + f"/api/v1/export?since={int(self.now - 600)}&until={int(self.now + 60)}"
        status, headers, body = fetch(url)
        self.assertEqual(status, 200)
        self.assertEqual(headers.get("Content-Type"), "application/zstd")
        self.assertIn("attachment", headers.get("Content-Disposition", ""))
        self.assertEqual(body[:4], b"\x28\xb5\x2f\xfd")
        path = os.path.join(self.tmp.name, "download.jsonl.zst")
        with open(path, "wb") as f:
            f.write(body)
        text = subprocess.run(["zstd", "-dc", path], capture_output=True, check=True).stdout.decode()
        lines = text.splitlines()
        self.assertGreater(len(lines), 100)  # 10 min of 5 s samples, and more
        ts = [json.loads(l)["t"] for l in lines[1:]]
        self.assertEqual(ts, sorted(ts))
        self.assertGreaterEqual(ts[0], self.now - 601)
        d = subprocess.run([GPUDOCTOR, "diagnose", "--from", path], capture_output=True, text=True, timeout=60)
        self.assertIn(d.returncode, (0, 1, 2), d.stderr)
        self.assertIn("thermal-throttling", d.stdout)

    def test_narrow_and_dark(self):
        p = self.page
        p.send("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2,
                                                      "mobile": True})
        p.send("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        p.navigate(self.base + "/")
        p.wait_for("document.querySelectorAll('.card.gpu').length === 4", 15)
        p.wait_for("Number(document.querySelector('[data-chart=util]').dataset.points) > 0", 15)
        # Nothing wider than the phone: no sideways scrolling of the page.
        self.assertLessEqual(p.evaluate("document.documentElement.scrollWidth"), 391)
        # What is wrong comes first on a phone, then one column of cards.
        self.assertLess(p.evaluate("document.getElementById('findings').getBoundingClientRect().top"),
                        p.evaluate("document.getElementById('cards').getBoundingClientRect().top"))
        lefts = p.evaluate("Array.from(document.querySelectorAll('.card')).map(c => c.getBoundingClientRect().left)")
        self.assertEqual(len(set(round(x) for x in lefts)), 1)
        bg = p.evaluate("getComputedStyle(document.body).backgroundColor")
        rgb = [int(x) for x in bg[bg.index("(") + 1:bg.index(")")].split(",")[:3]]
        self.assertLess(sum(rgb), 120, bg)  # dark
        os.makedirs(ARTIFACTS, exist_ok=True)
        p.screenshot(os.path.join(ARTIFACTS, "dashboard-phone-dark.png"), full_page=False)
        self.assertEqual(p.errors(), [])




class ShortHistory(ServedPage):
    """Three minutes of history in the 15 m charts: the data fills the
    chart's width instead of its right fifth, and no axis label is cut."""

    def setUp(self):
        super().setUp()
        now = time.time()
        trace = os.path.join(self.tmp.name, "short.jsonl")
        subprocess.run([TRACEGEN, "--scenario", "healthy-training", "--gpus", "4", "--duration", "3m",
                        "--interval", "1s", "--start", str(int(now - 185)), "-o", trace],
                       check=True, capture_output=True, timeout=120)
        db = os.path.join(self.tmp.name, "history.db")
        subprocess.run([STORE_FILL, "--db", db, "--trace", trace], check=True, capture_output=True,
                       timeout=120)
        self.open_dashboard(scenario_4gpu(), ["--db", db])

    def test_three_minutes_fill_the_15m_chart(self):
        p = self.page
        p.navigate(self.base + "/")
        p.wait_for("document.querySelector('[data-range=\"15m\"]') !== null", 15)
        p.evaluate("document.querySelector('[data-range=\"15m\"]').click()")
        p.wait_for("document.getElementById('range-text').innerText.startsWith('last 15m')", 10)
        p.wait_for("Number(document.querySelector('[data-chart=util]').dataset.points) > 500", 15)
        p.wait_for("Number(document.querySelector('[data-chart=util]').dataset.shownMin) > 0", 10)
        s = chart_state(p, "util")
        self.assertGreater(s["xmax"] - s["xmin"], 170, s)  # the three minutes
        # They span the chart: before, 3 of the 15 minutes at its right edge.
        self.assertGreater((s["xmax"] - s["xmin"]) / (s["shownMax"] - s["shownMin"]), 0.95, s)
        Dashboard.check_axes(self, p)


class NoDbCharts(ServedPage):
    """serve --no-db: the charts show the samples serve holds in memory,
    and say that this is all there is."""

    def setUp(self):
        super().setUp()
        header, samples = load_scenario(scenario_4gpu())
        header["loop"] = True
        self.open_dashboard(write_scenario(header, samples, self.tmp.name), ["--no-db"])

    def test_charts_fill_from_memory(self):
        p = self.page
        p.navigate(self.base + "/")
        p.wait_for("Number(document.querySelector('[data-chart=util]').dataset.points) >= 8", 20)
        p.wait_for("document.getElementById('range-text').innerText"
                   ".includes('no database: the last 15m00s in memory')", 10)
        self.assertNotIn("unavailable", p.evaluate("document.getElementById('range-text').innerText"))


class WebConfigPage(E2E):
    """The dashboard behind --web-config (TLS and basic auth in
    node_exporter's format): the page, its assets, its API and its live
    stream need the password, and Chromium, given it, shows the page."""

    def setUp(self):
        super().setUp()
        from test_serve_attacks import BCRYPT_HASH
        self.crt, _ = self_signed_cert(self.tmp.name)
        cfg = os.path.join(self.tmp.name, "web.yml")
        with open(cfg, "w") as f:
            f.write("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
                    f"basic_auth_users:\n  prometheus: '{BCRYPT_HASH}'\n")
        header, samples = load_scenario(scenario_4gpu())
        header["loop"] = True
        scen = write_scenario(header, samples, self.tmp.name)
        self.serve = Serve(scen, ["--no-db", "--web-config", cfg], self.tmp)

    def tearDown(self):
        self.serve.proc.terminate()
        self.serve.proc.wait(20)
        super().tearDown()

    def get(self, path, auth):
        import base64
        import http.client
        import ssl
        ctx = ssl.create_default_context(cafile=self.crt)
        conn = http.client.HTTPSConnection("127.0.0.1", self.serve.port, timeout=10, context=ctx)
        headers = {"Authorization": "Basic " + base64.b64encode(auth.encode()).decode()} if auth else {}
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        body = r.read(200) if path == "/api/v1/events" else r.read()
        status = r.status
        conn.close()
        return status, body

    def test_page_stream_and_api_need_the_password(self):
        good = "prometheus:s3cret pass"
        status, html = self.get("/", good)
        self.assertEqual(status, 200)
        import re
        asset = re.search(rb'src="(/assets/[^"]+app\.js)"', html).group(1).decode()
        for path in ("/", asset, "/api/v1/status", "/api/v1/events"):
            self.assertEqual(self.get(path, None)[0], 401, path)
            self.assertEqual(self.get(path, "prometheus:wrong")[0], 401, path)
        self.assertEqual(self.get(asset, good)[0], 200)
        status, stream = self.get("/api/v1/events", good)
        self.assertEqual(status, 200)
        self.assertTrue(stream.startswith(b"retry: 2000"), stream)

        browser = Browser(extra_args=["--ignore-certificate-errors"])
        try:
            p = browser.new_page()
            p.navigate(f"https://prometheus:s3cret%20pass@127.0.0.1:{self.serve.port}/")
            p.wait_for("document.querySelectorAll('.card.gpu').length === 4", 20)
            p.wait_for("document.getElementById('live-text').innerText === 'live'", 20)
            p.close()
        finally:
            browser.close()


class DatacenterCards(E2E):
    """GPU cards of datacenter GPUs: a MIG A100's instances with their
    memory, and an H100 node with a link down shows NVLink up/total as a
    fault and its GPM SM activity (tracegen's scenarios through the fake)."""

    def card_texts(self, scenario, gpus):
        trace = os.path.join(self.tmp.name, scenario + ".jsonl")
        subprocess.run([TRACEGEN, "--scenario", scenario, "--gpus", str(gpus), "--duration", "3s",
                        "-o", trace, "-q"], check=True, timeout=120)
        with open(trace) as f:
            header, samples = read_trace(f.read())
        path = write_scenario(header, samples[-1:], self.tmp.name)
        serve = Serve(path, ["--db", os.path.join(self.tmp.name, scenario + ".db")], self.tmp)
        browser = Browser()
        try:
            p = browser.new_page()
            p.navigate(f"http://{serve.host}:{serve.port}/")
            p.wait_for(f"document.querySelectorAll('.card.gpu').length === {gpus}", 20)
            p.wait_for("document.querySelector('.card.gpu').innerText.includes('PCIe')", 10)
            cards = p.evaluate("Array.from(document.querySelectorAll('.card.gpu')).map(c => c.innerText)")
            crit = p.evaluate("Array.from(document.querySelectorAll('.card.gpu .chip.crit'))"
                              ".map(c => c.closest('.card').dataset.gpu + ':' + c.innerText)")
            p.close()
            return header, samples[-1], cards, crit
        finally:
            browser.close()
            serve.proc.terminate()
            serve.proc.wait(20)

    def test_mig_instances_with_their_memory(self):
        _, sample, cards, _ = self.card_texts("mig-a100", 2)
        instances = sample["gpus"][0]["mig_instances"]
        self.assertGreaterEqual(len(instances), 2)
        for mi in instances:
            self.assertIn(f"GI{mi['gi_id']} {mi['profile']}", cards[0])
        self.assertNotIn("MIG", cards[1])  # GPU 1 is not in MIG mode

    def test_nvlink_down_is_a_fault_and_gpm_activity_shows(self):
        _, sample, cards, crit = self.card_texts("nvlink-link-down", 4)
        down = [g for g in sample["gpus"]
                if any(not l["active"] for l in g.get("nvlinks") or [])]
        self.assertTrue(down, "the scenario has no link down")
        for g in sample["gpus"]:
            links = g["nvlinks"]
            up = sum(1 for l in links if l["active"])
            self.assertIn(f"{up}/{len(links)} up", cards[g["index"]])
            self.assertIn("SM activity", cards[g["index"]])
        self.assertIn(f"{down[0]['index']}:", " ".join(crit))
        self.assertTrue(any("up" in c for c in crit), crit)


if __name__ == "__main__":
    unittest.main()
