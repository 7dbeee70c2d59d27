#!/usr/bin/python3
"""The dashboard's Fleet page at its largest (printed, nothing asserted):
serve --fleet-prometheus against a Prometheus the bench runs
(tests/e2e/fake_prometheus.py) that lists NODES nodes of 8 GPUs, the Fleet
page opened in headless Chromium (tests/e2e/cdp.py), and:

- first draw: from navigation to the grid drawn (the page's
  gd-fleet-drawn mark, then the next frame) with every node's row;
- an update: a round's "fleet" event re-rendering the grid (the page's
  gd-fleet-render measure, and to the next frame), median of several;
- the page's JS heap and DOM nodes once it has updated;
- GET /api/v1/fleet: its size (identity and gzip) and serve's time to
  write it (a new round's body, then the same one cached).

Each round changes every GPU's util (a busy fleet), every 64th node has a
GPU with double-bit ECC errors (critical), every 32nd a hot GPU and every
100th stale samples. The anchor is the same page at 64 nodes (Grafana is
not available here); the goal is a page a user keeps open: first draw
under 1 s, an update under 100 ms.

  /usr/bin/python3 bench/fleet/fleet_page.py BUILD_DIR [--nodes 2048 --anchor 64 --updates 5]
(also run by bench/fleet/run.sh). Needs Debian's chromium and
python3-websocket (install-deps.sh --test). Chromium, serve and the fake
Prometheus share the machine's CPUs, as a page open beside a busy serve.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "e2e"))
from cdp import Browser  # noqa: E402
from fake_prometheus import BATCHED, FakePrometheus  # noqa: E402

GPUS = 8
ROUND_S = 5  # serve reads the fleet every 5 s
MODEL = "NVIDIA H100 80GB HBM3"
METRIC = re.compile(r"(DCGM_FI_\w+)")

# Records, from the page's own marks, when each render ended, how long its
# script took and when the frame after it ran (the grid on screen), with
# the rows it drew. Installed before the page's scripts run.
OBSERVE_JS = """
window.__gdFleet = [];
new PerformanceObserver(list => {
  for (const e of list.getEntries()) {
    if (e.name !== 'gd-fleet-render') continue;
    const rec = { start: e.startTime, end: e.startTime + e.duration, script_ms: e.duration,
      // The nodes the grid lists; a page that draws them all has no data-rows.
      rows: Number(document.getElementById('fleet-grid').dataset.rows ||
                   document.querySelectorAll('#fleet-grid tr.fleet-node').length),
      drawn: document.querySelectorAll('#fleet-grid tr.fleet-node').length };
    window.__gdFleet.push(rec);
    requestAnimationFrame(() => setTimeout(() => { rec.painted = performance.now(); }, 0));
  }
}).observe({ entryTypes: ['measure'] });
"""

# Scrolls to the end of the page and waits for the frame after: the time
# and the last row on screen then (the order is worst first, by name).
SCROLL_JS = """(async () => {
  const t0 = performance.now();
  window.scrollTo(0, document.documentElement.scrollHeight);
  for (let i = 0; i < 3; i++) await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
  const rows = [...document.querySelectorAll('#fleet-grid tr.fleet-node')]
    .filter(r => r.getBoundingClientRect().top < window.innerHeight);
  return JSON.stringify({ ms: performance.now() - t0, last: rows.length ? rows[rows.length - 1].dataset.node : null });
})()"""


def node_name(k):
    return f"gpu-{k:05d}"


class FleetAnswers:
    """query_range for `nodes` nodes of 8 GPUs, batched queries answered in
    one reply (the entries' series tagged with gd_entry) and each metric's
    body built once a round: Python must not be what the page waits for."""

    def __init__(self, nodes):
        self.nodes = nodes
        self.cache = {}

    def value(self, metric, k, gpu, rnd):
        if metric == "DCGM_FI_DEV_GPU_UTIL":
            return (k * 7 + gpu * 13 + rnd * 11) % 101
        if metric == "DCGM_FI_DEV_FB_USED":
            return 40_000 + (k + gpu) % 1000
        if metric == "DCGM_FI_DEV_FB_FREE":
            return 41_000 - (k + gpu) % 1000
        if metric == "DCGM_FI_DEV_GPU_TEMP":
            return 93 if k % 32 == 5 and gpu == 2 else 55 + (k + gpu) % 20
        if metric == "DCGM_FI_DEV_POWER_USAGE":
            return 300 + (k * 3 + gpu) % 300
        if metric == "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL":
            return 2 if k % 64 == 3 and gpu == k % GPUS else 0
        return None

    def series(self, metric, stamp, end, tag):
        rnd = int(end // ROUND_S)
        key = (metric, stamp, end, tag)
        if key in self.cache:
            return self.cache[key]
        if len(self.cache) > 64:
            self.cache.clear()
        out = []
        for k in range(self.nodes):
            name = node_name(k)
            t = end - 150 if stamp and k % 100 == 7 else end
            for gpu in range(GPUS):
                v = t if stamp else self.value(metric, k, gpu, rnd)
                if v is None:
                    break
                labels = {"Hostname": name, "gpu": str(gpu), "UUID": f"GPU-{name}-{gpu}",
                          "modelName": MODEL, "instance": f"{name}:9400"}
                if tag is not None:
                    labels["gd_entry"] = tag
                out.append(json.dumps({"metric": labels, "values": [[end, str(v)]]}))
        self.cache[key] = out
        return out

    def __call__(self, query, start, end, step):
        parts = BATCHED.findall(query) if query.startswith("label_replace(") else [(query, None)]
        result = []
        for inner, tag in parts:
            names = [n for n in METRIC.findall(inner) if n != "DCGM_FI_DRIVER_VERSION"]
            if not names or self.value(names[-1], 0, 0, 0) is None:
                continue
            result += self.series(names[-1], "timestamp(" in inner, end, tag)
        body = ('{"status":"success","data":{"resultType":"matrix","result":[' +
                ",".join(result) + "]}}").encode()
        return 200, "application/json", body


def get(url, gzip_ok=False):
    req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"} if gzip_ok else {})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=30) as r:
        body = r.read()
    return body, time.perf_counter() - t0


def start_serve(build, prom_url):
    gd = os.path.join(build, "src", "cli", "gpudoctor")
    fake = os.path.join(build, "tests", "fake_nvml", "lib", "libnvidia-ml.so.1")
    scenario = os.path.join(HERE, "..", "..", "tests", "data", "scenario_4gpu.jsonl")
    env = dict(os.environ, FAKE_NVML_SCENARIO=scenario)
    serve = subprocess.Popen([gd, "--nvml-lib", fake, "--kmsg", "none", "--interval", "1s", "serve",
                              "--listen", "127.0.0.1:0", "--no-db", "--fleet-prometheus", prom_url],
                             env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    for line in serve.stderr:
        m = re.search(r"listen=[0-9.]+:(\d+)", line)
        if m:
            threading.Thread(target=lambda: [None for _ in serve.stderr], daemon=True).start()
            return serve, f"http://127.0.0.1:{m.group(1)}"
    raise RuntimeError("serve did not start")


def wait_fleet(base, nodes, timeout=120):
    """The first round's document, once it lists every node."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            doc = json.loads(get(base + "/api/v1/fleet")[0])
            if len(doc.get("nodes", [])) == nodes:
                return doc
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"serve's fleet never listed {nodes} nodes")


def api_numbers(base):
    """(identity bytes, gzip bytes, ms to write a new body, ms cached)."""
    # A new second makes serve write the body again (it keeps one a round
    # and second: the ages move); the next request in that second is cached.
    written, cached = [], []
    for _ in range(5):
        time.sleep(1.02 - time.time() % 1)
        body, t_new = get(base + "/api/v1/fleet")
        _, t_cached = get(base + "/api/v1/fleet")
        written.append(t_new * 1000)
        cached.append(t_cached * 1000)
    gz, _ = get(base + "/api/v1/fleet", gzip_ok=True)
    return len(body), len(gz), statistics.median(written), statistics.median(cached)


def page_numbers(base, nodes, updates, last):
    browser = Browser(1366, 900)
    try:
        page = browser.new_page()
        page.send("Page.addScriptToEvaluateOnNewDocument", {"source": OBSERVE_JS})
        page.send("Performance.enable")
        page.navigate(base + "/#fleet")
        page.wait_for(f"window.__gdFleet && window.__gdFleet.some(r => r.rows === {nodes} && r.painted)",
                      timeout=60)
        recs = page.evaluate("JSON.stringify(window.__gdFleet)")
        first = next(r for r in json.loads(recs) if r["rows"] == nodes)
        nav = page.evaluate("performance.getEntriesByType('navigation')[0].startTime")
        fetched = page.evaluate("JSON.stringify(performance.getEntriesByType('resource')"
                                ".filter(e => e.name.endsWith('/api/v1/fleet')).map(e => e.duration))")
        # The rounds that follow: each "fleet" event fetches and re-renders.
        seen = len(json.loads(recs))
        before = {m["name"]: m["value"] for m in page.send("Performance.getMetrics")["metrics"]}
        page.wait_for(f"window.__gdFleet.length >= {seen + updates} && "
                      f"window.__gdFleet[{seen + updates - 1}].painted",
                      timeout=(updates + 3) * ROUND_S * 2)
        recs = json.loads(page.evaluate("JSON.stringify(window.__gdFleet)"))[seen:seen + updates]
        # Scrolled to the end: the last node's row comes on screen.
        scrolled = json.loads(page.evaluate(SCROLL_JS, timeout=30))
        metrics = {m["name"]: m["value"] for m in page.send("Performance.getMetrics")["metrics"]}
        # Where an update's time goes: Chromium's own counters over the
        # updates (seconds, all the page did then), per update.
        spent = {k: (metrics[k] - before[k]) * 1000 / updates
                 for k in ("ScriptDuration", "RecalcStyleDuration", "LayoutDuration", "TaskDuration")}
        heap = page.send("Runtime.getHeapUsage")
        errors = page.errors()
        page.close()
        return {
            "first_draw_ms": first["painted"] - nav,
            "first_script_ms": first["script_ms"],
            "fetch_ms": json.loads(fetched)[0] if json.loads(fetched) else float("nan"),
            "update_script_ms": statistics.median(r["script_ms"] for r in recs),
            "update_painted_ms": statistics.median(r["painted"] - r["start"] for r in recs),
            "update_runs": [round(r["painted"] - r["start"]) for r in recs],
            "heap_mb": heap["usedSize"] / 1e6,
            "dom_nodes": int(metrics.get("Nodes", 0)),
            "update_style_ms": spent["RecalcStyleDuration"],
            "update_layout_ms": spent["LayoutDuration"],
            "update_task_ms": spent["TaskDuration"],
            "scroll_ms": scrolled["ms"] if scrolled["last"] == last else float("nan"),
            "drawn": first["drawn"],
            "errors": errors,
        }
    finally:
        browser.close()


def measure(build, nodes, updates):
    prom = FakePrometheus(nodes=[node_name(k) for k in range(nodes)])
    # Batched queries answered here in one piece (FakePrometheus' own
    # wrapper answers them entry by entry through json, slower than serve).
    prom.query_range = FleetAnswers(nodes)
    serve = None
    try:
        serve, base = start_serve(build, prom.url())
        doc = wait_fleet(base, nodes)
        out = {"nodes": nodes, "critical": sum(1 for n in doc["nodes"] if n["worst_severity"] == "critical"),
               "findings": sum(n["findings_count"] or 0 for n in doc["nodes"]),
               "round_s": doc.get("round_s")}
        out["api_bytes"], out["api_gzip"], out["api_write_ms"], out["api_cached_ms"] = api_numbers(base)
        out.update(page_numbers(base, nodes, updates, doc["nodes"][-1]["name"]))
        return out
    finally:
        if serve:
            serve.terminate()
            serve.wait(30)
        prom.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--nodes", type=int, default=2048)
    ap.add_argument("--anchor", type=int, default=64)
    ap.add_argument("--updates", type=int, default=5)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    runs = [measure(build, n, a.updates) for n in (a.anchor, a.nodes)]
    rows = [
        ("nodes x 8 GPUs", "nodes", "{:d}", ""),
        ("nodes with a critical finding", "critical", "{:d}", ""),
        ("serve's round (Prometheus to frame), s", "round_s", "{:.2f}", ""),
        ("GET /api/v1/fleet, KiB", "api_bytes", "{:.0f}", "", 1 / 1024),
        ("  asked with Accept-Encoding: gzip, KiB", "api_gzip", "{:.0f}", "", 1 / 1024),
        ("  serve writes it, ms (new body)", "api_write_ms", "{:.1f}", ""),
        ("  cached (same round and second), ms", "api_cached_ms", "{:.1f}", ""),
        ("  the page's fetch of it, ms", "fetch_ms", "{:.0f}", ""),
        ("first draw: navigation to grid on screen, ms", "first_draw_ms", "{:.0f}", "< 1000"),
        ("  its render script, ms", "first_script_ms", "{:.0f}", ""),
        ("update: a round re-rendered to screen, ms (median)", "update_painted_ms", "{:.0f}", "< 100"),
        ("  its render script, ms (median)", "update_script_ms", "{:.0f}", ""),
        ("  style, ms (mean, Chromium's counters)", "update_style_ms", "{:.0f}", ""),
        ("  layout, ms (mean)", "update_layout_ms", "{:.0f}", ""),
        ("  all the page's tasks, ms (mean)", "update_task_ms", "{:.0f}", ""),
        ("scrolled to the end, last node on screen, ms", "scroll_ms", "{:.0f}", ""),
        ("rows in the DOM at first draw", "drawn", "{:d}", ""),
        ("JS heap used, MB", "heap_mb", "{:.1f}", ""),
        ("DOM nodes", "dom_nodes", "{:d}", ""),
    ]
    print(f"Fleet page, headless Chromium, {os.cpu_count()} CPUs "
          f"(the {a.anchor}-node page is the anchor; goal: a page a user keeps open)")
    print(f"  {'':52s} {a.anchor:>9d} {a.nodes:>9d}   goal")
    for label, key, fmt, goal, *scale in rows:
        f = scale[0] if scale else 1
        vals = [fmt.format(r[key] * f if f != 1 else r[key]) for r in runs]
        print(f"  {label:52s} {vals[0]:>9s} {vals[1]:>9s}   {goal}")
    print(f"  update runs at {a.nodes} nodes, ms: {runs[1]['update_runs']}")
    for r in runs:
        if r["errors"]:
            print(f"  page errors at {r['nodes']} nodes: {r['errors'][:5]}")


if __name__ == "__main__":
    main()
