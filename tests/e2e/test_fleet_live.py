"""The fleet, live, at the size the issue names: one real Prometheus holding
64 backfilled nodes' dcgm-exporter series (one of them faulty) and scraping
three live `gpudoctor serve` instances every second, watched by `gpudoctor
top --prometheus` in tmux:
  node-01..64  backfilled, 2 GPUs each, their series running 10 minutes past
               now so every round finds them fresh; node-41's GPU 1 has 2
               volatile double-bit ECC errors -> ecc-uncorrectable (critical);
               node-17 was held down by heat from 7 to 3 minutes ago and is
               cool now -> thermal-throttling (warning), which only a
               diagnosis of the last 10 minutes finds (read from Prometheus
               when top starts, not gathered since)
  live-1..3    `serve --hostname live-N` with the fake NVML, healthy GPUs
               held by a live process
The screen must list all 67 nodes within one refresh with the faulty one
first and its finding, and a live node opened shows its GPU processes
from serve's series; stopping live-2's serve must mark its row as no
longer answering within two refreshes (Prometheus marks a dead target's
series stale at its next scrape) while live-1 and live-3 keep answering
with fresh data. prometheus, promtool or tmux missing fails: never a
skip."""
import copy
import json
import os
import re
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

from gd_e2e import FAKE_NVML, GPUDOCTOR, kill_tree, scenario_4gpu, spawn_python, write_scenario
from gd_tmux import Tmux
from test_prometheus_source import DCGM, PROMETHEUS, PROMTOOL, STEP, free_port, gpu_values
import subprocess

BACKFILLED = [f"node-{i:02d}" for i in range(1, 65)]
FAULTY = "node-41"
HOT = "node-17"
HOT_FROM, HOT_TO = 420, 180  # seconds before the backfill's now
LIVE = ["live-1", "live-2", "live-3"]
INTERVAL_S = 3  # top's refresh


def exposition(now):
    """OpenMetrics text of the 64 backfilled nodes, from 30 minutes ago to
    10 minutes ahead, a sample every STEP."""
    start = (now - 1800) // STEP * STEP
    times = range(start, now + 601, STEP)
    out = []
    for name, typ, _help in DCGM:
        out.append(f"# TYPE {name} {typ}")
        for k, node in enumerate(BACKFILLED):
            for gpu in (0, 1):
                labels = (f'gpu="{gpu}",UUID="GPU-{node}-{gpu}",device="nvidia{gpu}",'
                          f'modelName="NVIDIA H100 80GB HBM3",Hostname="{node}",'
                          f'instance="10.4.0.{k + 1}:9400",job="dcgm-exporter"')
                for i, t in enumerate(times):
                    v = gpu_values(node == HOT and now - HOT_FROM <= t < now - HOT_TO, i)
                    if node == FAULTY and gpu == 1:
                        v["DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"] = 2
                    out.append(f"{name}{{{labels}}} {v[name]} {t}")
    out.append("# EOF")
    return "\n".join(out) + "\n"


def healthy_scenario(live_pid):
    """scenario_4gpu's first two GPUs, healthy: cool, persistence on, no ECC
    errors or replays, PCIe links at their maximum, each held by `live_pid` with what NVML counts."""
    with open(scenario_4gpu()) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    header = lines[0]
    header["gpus"] = header["gpus"][:2]
    for g in header["gpus"]:
        g["persistence_mode"] = True
    samples = []
    for s in lines[1:]:
        s = copy.deepcopy(s)
        s["gpus"] = s["gpus"][:2]
        for g in s["gpus"]:
            g.update(temp_c=60, mem_temp_c=55, clock_event_reasons=[], pcie_replay_total=0,
                     pcie_gen=4, pcie_width=16,
                     ecc_sbe_volatile_total=0, ecc_dbe_volatile_total=0,
                     util_pct=90.0, mem_used_bytes=20 << 30, mem_reserved_bytes=0,
                     processes=[{"pid": live_pid, "used_bytes": 20 << 30, "type": "compute"}])
        samples.append(s)
    return header, samples


def http_ok(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def wait_until(what, fn, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if fn():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def rows(screen):
    """Each node row's name -> its line, and the names top to bottom."""
    found = []
    for line in screen.split("\n"):
        m = re.match(r"\s*((?:node|live)-\d+)\s", line)
        if m:
            found.append((m.group(1), line))
    return found


class FleetLive(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not PROMETHEUS or not PROMTOOL:
            raise AssertionError("prometheus and promtool not installed (Debian package "
                                 "'prometheus')")
        if not FAKE_NVML or not os.path.exists(FAKE_NVML):
            raise AssertionError(f"fake libnvidia-ml.so.1 not found (FAKE_NVML_LIB={FAKE_NVML!r})")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.procs = {}
        try:
            cls._start()
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for p in cls.procs.values():
            kill_tree(p)
        cls.tmp.cleanup()

    @classmethod
    def _spawn(cls, name, argv, env=None):
        log = open(os.path.join(cls.tmp.name, f"{name}.log"), "w")
        cls.procs[name] = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT,
                                           start_new_session=True)
        log.close()

    @classmethod
    def _log(cls, name):
        with open(os.path.join(cls.tmp.name, f"{name}.log")) as f:
            return f.read()[-2000:]

    @classmethod
    def _start(cls):
        d = cls.tmp.name
        now = int(time.time())
        # The backfill first: Prometheus opens the blocks at start.
        om = os.path.join(d, "fleet.om")
        with open(om, "w") as f:
            f.write(exposition(now))
        tsdb = os.path.join(d, "tsdb")
        p = subprocess.run([PROMTOOL, "tsdb", "create-blocks-from", "openmetrics", om, tsdb],
                           capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            raise AssertionError(f"promtool: {p.stdout}{p.stderr}")

        job = spawn_python("import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(900)")
        cls.procs["job"] = job
        cls.job_pid = int(job.stdout.readline())
        header, samples = healthy_scenario(cls.job_pid)
        scenario = write_scenario(header, samples, d)
        cls.serves = {}
        for name in LIVE:
            port = free_port()
            cls._spawn(name, [GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none",
                              "--interval", "1s", "serve", "--listen", f"127.0.0.1:{port}",
                              "--no-db", "--hostname", name],
                       env=dict(os.environ, FAKE_NVML_SCENARIO=scenario))
            cls.serves[name] = f"127.0.0.1:{port}"
        for name, addr in cls.serves.items():
            wait_until(f"{name} to answer (log: {cls._log(name)})",
                       lambda: http_ok(f"http://{addr}/healthz"), timeout=30)

        port = free_port()
        cfg = os.path.join(d, "prometheus.yml")
        targets = ", ".join(f"'{a}'" for a in cls.serves.values())
        with open(cfg, "w") as f:
            # The backfilled blocks run ahead of now, and Prometheus takes
            # in-order samples only after the newest block's end: the live
            # scrapes go in as out-of-order samples.
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "storage:\n  tsdb:\n    out_of_order_time_window: 1h\n"
                    "scrape_configs:\n  - job_name: gpudoctor\n    static_configs:\n"
                    f"      - targets: [{targets}]\n")
        cls._spawn("prometheus", [PROMETHEUS, f"--config.file={cfg}",
                                  f"--storage.tsdb.path={tsdb}",
                                  f"--web.listen-address=127.0.0.1:{port}",
                                  "--storage.tsdb.retention.time=30d", "--log.level=warn"])
        cls.url = f"http://127.0.0.1:{port}"
        wait_until(f"prometheus to be ready (log: {cls._log('prometheus')})",
                   lambda: http_ok(cls.url + "/-/ready"), timeout=60)

        # Every live serve scraped at least once: its GPU series are there.
        def scraped():
            q = urllib.parse.urlencode({"query": "count by (Hostname) (DCGM_FI_DEV_GPU_UTIL)"})
            with urllib.request.urlopen(f"{cls.url}/api/v1/query?{q}", timeout=5) as r:
                result = json.load(r)["data"]["result"]
            return {x["metric"].get("Hostname") for x in result} >= set(LIVE)
        wait_until("prometheus to scrape the three serves", scraped, timeout=60)

    def test_the_fleet_listed_worst_first_and_a_stopped_node_marked(self):
        # 67 rows and the header: a tall terminal.
        pane = Tmux(self.tmp.name, [GPUDOCTOR, "--interval", f"{INTERVAL_S}", "top",
                                    "--prometheus", self.url], width=150, height=80)
        self.addCleanup(pane.close)
        every = BACKFILLED + LIVE
        # One refresh: the first round lists every node.
        screen = pane.wait_for(lambda s: len(rows(s)) == len(every), timeout=30)
        listed = rows(screen)
        self.assertEqual(sorted(n for n, _ in listed), sorted(every), screen)
        self.assertIn("67 nodes", screen)
        self.assertIn("1 critical", screen)
        self.assertIn("0 not answering", screen)
        self.assertEqual(listed[0][0], FAULTY, screen)
        self.assertIn("CRIT ecc-uncorrectable", listed[0][1])
        # The heat of minutes ago: once each node's last 10 minutes are
        # read, a round later.
        screen = pane.wait_for(
            lambda s: len(rows(s)) == len(every) and "WARN" in dict(rows(s)).get(HOT, ""),
            timeout=3 * INTERVAL_S + 15)
        listed = rows(screen)
        self.assertEqual([n for n, _ in listed][:2], [FAULTY, HOT], screen)
        self.assertIn("WARN thermal-throttling", listed[1][1])
        self.assertIn("1 warning", screen)
        for name, line in listed[2:]:
            self.assertNotRegex(line, "CRIT|WARN", screen)
            self.assertRegex(line, r" ok \d+s ", screen)
        # Opened: judged over its last 10 minutes of scrapes, with when the
        # heat was.
        pane.keys("/")
        pane.type(HOT)
        pane.keys("Enter")
        pane.wait_for(lambda s: [n for n, _ in rows(s)] == [HOT])
        pane.keys("Enter")
        screen = pane.wait_for(lambda s: "back to the fleet" in s and "findings (2)" in s,
                               timeout=10)
        self.assertRegex(screen, r"findings \(2\): this refresh's sample, and its last "
                                 r"\d+ scrapes \((9|10)m\)")
        # Each GPU, with the minutes it was held down.
        for gpu in (0, 1):
            self.assertRegex(screen, rf"WARN thermal-throttling +GPU {gpu} ")
        self.assertEqual(screen.count("sw_thermal_slowdown active in"), 2, screen)
        pane.keys("q")
        pane.wait_for("DATA")
        pane.keys("Escape")
        pane.wait_for(lambda s: len(rows(s)) == len(every))
        for name, line in listed:
            if name in LIVE:
                self.assertRegex(line, r" ok \d+s +2 ", line)

        # A live node opened: its GPUs, and its processes from serve's own
        # series (one query for that node when it is opened).
        pane.keys("/")
        pane.type("live-1")
        pane.keys("Enter")
        pane.wait_for(lambda s: [n for n, _ in rows(s)] == ["live-1"])
        pane.keys("Enter")
        # One row per GPU the job holds, with its memory, CPU and name (its
        # CPU share once serve has two samples of it).
        def job_rows(screen):
            return [l for l in screen.split("\n")
                    if re.match(rf"\s*{self.job_pid}\s.*20\.0 GiB\s+\d+\s+python", l)]
        screen = pane.wait_for(lambda s: "processes (2)" in s and len(job_rows(s)) == 2,
                               timeout=2 * INTERVAL_S + 10)
        self.assertIn("node live-1", screen)
        pane.keys("q")
        pane.wait_for("DATA")
        pane.keys("Escape")
        pane.wait_for(lambda s: len(rows(s)) == len(every))

        # live-2 stops answering: Prometheus's next scrape fails and marks
        # its series stale; within two refreshes its row says so, the
        # other live nodes go on answering.
        kill_tree(self.procs.pop("live-2"))
        stopped = time.monotonic()

        def marked(s):
            line = dict(rows(s)).get("live-2", "")
            return re.search(r" (gone|stale) \d+s ", line)
        # Two refreshes, the scrape that finds the target dead and a round's
        # own time (its deadline is 10 s; on a loaded 2-core runner a round
        # of 67 nodes takes up to ~2 s).
        screen = pane.wait_for(marked, timeout=2 * INTERVAL_S + 1 + 6)
        took = time.monotonic() - stopped
        self.assertIn("1 not answering", screen)
        self.assertEqual(len(rows(screen)), len(every), screen)
        # The worst first: the critical node, then the one that stopped.
        self.assertEqual([n for n, _ in rows(screen)][:2], [FAULTY, "live-2"], screen)
        # Two more refreshes later (its age counts on), the others are
        # still answering: their data as fresh as a scrape and a refresh.
        def age(s, name, states):
            m = re.search(rf" (?:{states}) (\d+)s ", dict(rows(s)).get(name, ""))
            return int(m.group(1)) if m else None

        screen = pane.wait_for(
            lambda s: (age(s, "live-2", "gone|stale") or 0) >= int(took) + 2 * INTERVAL_S,
            timeout=2 * INTERVAL_S + 10)
        for name in ("live-1", "live-3"):
            a = age(screen, name, "ok")
            self.assertIsNotNone(a, screen)
            self.assertLessEqual(a, INTERVAL_S + 2, screen)
        pane.keys("q")
        pane.wait_for("EXIT=0")


if __name__ == "__main__":
    unittest.main()
