"""The dashboard's numbers (printed, nothing asserted):

- page weight: the page, its scripts and styles as a browser gets them
  (gzip), goal < 100 KB;
- first chart drawn: the Performance API mark the page sets when its first
  chart has drawn data, in ms after navigation start, in headless Chromium
  with a cold and a warm cache, goal < 500 ms;
- serve's CPU with five dashboards open (five Chromium tabs on the live
  stream) at 1 Hz with 8 GPUs, beside the same daemon with none, goal < 2%
  of a core.

  /usr/bin/python3 bench/web/web_bench.py BUILD_DIR   (needs chromium and
  python3-websocket: scripts/install-deps.sh --test)
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "e2e"))
from cdp import Browser  # noqa: E402

MEASURE_S = float(os.environ.get("MEASURE_S", "60"))
GPUS = int(os.environ.get("GPUS", "8"))
TABS = int(os.environ.get("TABS", "5"))


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fetch(url, gzip=True):
    req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"} if gzip else {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read(), dict(r.headers)


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    gd = os.path.join(build, "src", "cli", "gpudoctor")
    fake = os.path.join(build, "tests", "fake_nvml", "lib", "libnvidia-ml.so.1")
    tracegen = os.path.join(build, "tools", "tracegen", "gpudoctor-tracegen")
    fill = os.path.join(build, "tests", "store", "gd_store_fill")
    tmp = tempfile.TemporaryDirectory()
    now = int(time.time())
    # The fake replays 10 minutes of an 8-GPU job in a loop; the history
    # holds the day before (so the 1 h range has data to draw).
    scen = os.path.join(tmp.name, "scenario.jsonl")
    subprocess.run([tracegen, "--scenario", "healthy-training", "--gpus", str(GPUS), "--duration", "10m",
                    "-o", scen], check=True, capture_output=True)
    with open(scen) as f:
        lines = f.read().splitlines()
    lines[0] = lines[0][:-1] + ', "loop": true}'
    with open(scen, "w") as f:
        f.write("\n".join(lines) + "\n")
    past = os.path.join(tmp.name, "past.jsonl")
    subprocess.run([tracegen, "--scenario", "healthy-training", "--gpus", str(GPUS), "--duration", "24h",
                    "--processes", "64", "--start", str(now - 86400), "-o", past], check=True, capture_output=True)
    db = os.path.join(tmp.name, "h.db")
    subprocess.run([fill, "--db", db, "--trace", past, "--roll-up"], check=True, capture_output=True)
    os.unlink(past)
    env = dict(os.environ, FAKE_NVML_SCENARIO=scen)
    serve = subprocess.Popen([gd, "--nvml-lib", fake, "--kmsg", "none", "--interval", "1s", "serve",
                              "--listen", "127.0.0.1:0", "--db", db], env=env, stderr=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, text=True)
    port = None
    for line in serve.stderr:
        m = re.search(r"listen=[0-9.]+:(\d+)", line)
        if m:
            port = int(m.group(1))
            break
    base = f"http://127.0.0.1:{port}"
    try:
        import gzip as gz
        html, _ = fetch(base + "/")
        rows = [("/ (index.html)", len(html))]
        page = gz.decompress(html).decode()
        for url in sorted(set(re.findall(r'(?:src|href)="(/assets/[^"]+)"', page))):
            body, _ = fetch(base + url)
            rows.append((url.rsplit("/", 1)[1], len(body)))
        print("page weight (gzip, as the browser gets it):")
        for name, n in rows:
            print(f"  {name:24s} {n / 1024:7.1f} KiB")
        total = sum(n for _, n in rows)
        print(f"  total                    {total / 1024:7.1f} KiB   <- goal < 100 KB")

        browser = Browser(1366, 900)
        try:
            cold, warm = [], []
            for i in range(6):
                p = browser.new_page()
                p.send("Network.setCacheDisabled", {"cacheDisabled": i < 3})
                p.navigate(base + "/")
                ms = p.wait_for("(() => { const e = performance.getEntriesByName('gd-first-chart');"
                                " return e.length ? e[0].startTime : 0; })()", 20)
                (cold if i < 3 else warm).append(ms)
                p.close()
            print(f"first chart drawn after navigation: cold cache median {statistics.median(cold):.0f} ms "
                  f"(runs {', '.join(f'{x:.0f}' for x in cold)}), warm {statistics.median(warm):.0f} ms   "
                  "<- goal < 500 ms")
        finally:
            browser.close()

        time.sleep(5)
        c0, t0 = cpu_seconds(serve.pid), time.time()
        time.sleep(MEASURE_S)
        idle = (cpu_seconds(serve.pid) - c0) / (time.time() - t0) * 100
        browser = Browser(1366, 900)
        pages = []
        try:
            for _ in range(TABS):
                p = browser.new_page()
                p.navigate(base + "/")
                pages.append(p)
            for p in pages:
                p.wait_for("document.getElementById('live-text').innerText === 'live'", 30)
            time.sleep(10)
            c0, t0 = cpu_seconds(serve.pid), time.time()
            time.sleep(MEASURE_S)
            loaded = (cpu_seconds(serve.pid) - c0) / (time.time() - t0) * 100
            alive = sum(1 for p in pages if p.evaluate("document.getElementById('live-text').innerText") == "live")
        finally:
            for p in pages:
                p.close()
            browser.close()
        print(f"serve CPU at 1 Hz, {GPUS} GPUs, {MEASURE_S:.0f} s each: idle {idle:.2f}% of a core, "
              f"{TABS} open dashboards {loaded:.2f}% ({alive} still live)   <- goal < 2%")
    finally:
        serve.terminate()
        serve.wait(30)
        tmp.cleanup()


if __name__ == "__main__":
    main()
