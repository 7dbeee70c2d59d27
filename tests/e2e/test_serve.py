"""gpudoctor serve, end to end: the real binary on the fake NVML, scraped
over HTTP like Prometheus would; hung and lost GPUs, bad requests, signals,
config reload and alerts to a fake Alertmanager."""
import http.client
import http.server
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

from gd_e2e import (E2E, FAKE_NVML, GPUDOCTOR, load_scenario, scenario_4gpu,
                    write_scenario)

MIB = 1024 * 1024


def first_sample_scenario(directory, faults=None):
    """The 4-GPU scenario frozen at its first sample (values do not move
    while the test scrapes), optionally with faults."""
    header, samples = load_scenario(scenario_4gpu())
    if faults is not None:
        header["faults"] = faults
    return write_scenario(header, samples[:1], directory), header, samples[0]


class Serve:
    """A running `gpudoctor serve` on a free port; stderr is collected.
    Without --db or --no-db in `args` its history goes to history.db in
    `tmp` (a directory of its own when none is given), never to the
    machine's default (/var/lib/gpudoctor as root), which tests running at
    once would share."""

    own_db_dir = None  # removed when serve is stopped or killed

    def __init__(self, scenario, args=(), tmp=None, listen="127.0.0.1:0", kmsg="none",
                 env=None):
        env = dict(os.environ, **(env or {}))
        env["FAKE_NVML_SCENARIO"] = scenario
        self.own_db_dir = None
        tmp = getattr(tmp, "name", tmp)  # a TemporaryDirectory or its path
        if not any(a in ("--db", "--no-db") or a.startswith("--db=") for a in args):
            if tmp is None:
                self.own_db_dir = tempfile.mkdtemp(prefix="gd_serve_db_")
            args = list(args) + ["--db", os.path.join(tmp or self.own_db_dir, "history.db")]
        cmd = [GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", kmsg,
               "--interval", "200ms", "--deadline", "300ms", "serve",
               "--listen", listen] + list(args)
        self.proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, text=True,
                                     errors="replace")
        self.lines = []
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        line = self.wait_log(r'msg="serving"', timeout=30)
        m = re.search(r"listen=([0-9.]+):(\d+)", line)
        self.host, self.port = m.group(1), int(m.group(2))

    def _read(self):
        for line in self.proc.stderr:
            with self.lock:
                self.lines.append(line.rstrip("\n"))

    def log(self):
        with self.lock:
            return list(self.lines)

    def wait_log(self, pattern, timeout=20, after=0):
        end = time.time() + timeout
        while time.time() < end:
            for line in self.log()[after:]:
                if re.search(pattern, line):
                    return line
            if self.proc.poll() is not None and not self.reader.is_alive():
                break
            time.sleep(0.05)
        raise AssertionError(f"no log line matching {pattern!r}:\n" + "\n".join(self.log()))

    def get(self, path, timeout=10):
        """(status, content-type, body text)."""
        url = f"http://{self.host}:{self.port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=timeout) as r:
                return r.status, r.headers.get("Content-Type"), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("Content-Type"), e.read().decode()

    def get_json(self, path):
        status, ctype, body = self.get(path)
        return status, json.loads(body)

    def metrics(self):
        status, _, body = self.get("/metrics")
        assert status == 200, body
        return parse_metrics(body)

    def wait_metrics(self, predicate, timeout=20):
        end = time.time() + timeout
        m = {}
        while time.time() < end:
            m = self.metrics()
            if predicate(m):
                return m
            time.sleep(0.1)
        raise AssertionError("metrics never satisfied the condition:\n" +
                             "\n".join(f"{k} {v}" for k, v in sorted(m.items())
                                       if k.startswith("gpudoctor_collect") or
                                       k.startswith("gpudoctor_gpu_lost")))

    def stop(self, sig=signal.SIGTERM, timeout=15):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        rc = self.proc.wait(timeout=timeout)
        self.reader.join(timeout=5)
        self.proc.stderr.close()
        self._remove_own_db()
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(timeout=5)
        if not self.proc.stderr.closed:
            self.proc.stderr.close()
        self._remove_own_db()

    def _remove_own_db(self):
        if self.own_db_dir:
            shutil.rmtree(self.own_db_dir, ignore_errors=True)
            self.own_db_dir = None


HOSTNAME_FIRST = re.compile(r'^(gpudoctor_[a-zA-Z0-9_:]+)\{Hostname="(?:[^"\\]|\\.)*"(,|\})')


def without_hostname(key):
    """'gpudoctor_x{Hostname="h",gpu="0"}' -> 'gpudoctor_x{gpu="0"}': every
    native series carries its node's Hostname first, as dcgm-exporter's
    series do; the tests key them without it."""
    if not key.startswith("gpudoctor_"):
        return key
    m = HOSTNAME_FIRST.match(key)
    assert m, f"no Hostname label first: {key}"
    rest = key[m.end():]
    return m.group(1) if m.group(2) == "}" else m.group(1) + "{" + rest


def parse_metrics(text):
    """'name{labels}' -> float for every series line (gpudoctor_* keyed
    without their Hostname label)."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        key, value = line.rsplit(" ", 1)
        out[without_hostname(key)] = float(value)
    return out


def dcgm_labels(header, gpu):
    """dcgm-exporter's labels; the host part of the sample is the real
    machine's (the fake replaces NVML only)."""
    g = header["gpus"][gpu]
    return (f'{{gpu="{gpu}",UUID="{g["uuid"]}",pci_bus_id="{g["pci_bus_id"]}",'
            f'device="nvidia{gpu}",modelName="{g["name"]}",'
            f'Hostname="{os.uname().nodename}",'
            f'DCGM_FI_DRIVER_VERSION="{header["driver"]["driver_version"]}"}}')


class ServeCase(E2E):
    def setUp(self):
        super().setUp()
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.kill()
        super().tearDown()

    def serve(self, scenario, args=()):
        s = Serve(scenario, args, self.tmp.name)
        self.servers.append(s)
        return s


class Metrics(ServeCase):
    def test_metrics_show_the_scenario_values_under_dcgm_names(self):
        path, header, sample = first_sample_scenario(self.tmp.name)
        s = self.serve(path, ["--no-db"])
        m = s.wait_metrics(lambda m: m.get('gpudoctor_collect_success{gpu="0"}') == 1)
        for g in sample["gpus"]:
            i = g["index"]
            total = header["gpus"][i]["memory_total_bytes"]
            want = {
                "DCGM_FI_DEV_GPU_UTIL": g["util_pct"],
                "DCGM_FI_DEV_MEM_COPY_UTIL": g["mem_util_pct"],
                "DCGM_FI_DEV_FB_USED": g["mem_used_bytes"] // MIB,
                "DCGM_FI_DEV_FB_FREE": (total - g["mem_used_bytes"]) // MIB,
                "DCGM_FI_DEV_GPU_TEMP": g["temp_c"],
                "DCGM_FI_DEV_MEMORY_TEMP": g["mem_temp_c"],
                "DCGM_FI_DEV_POWER_USAGE": g["power_w"],
                "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": g["energy_mj_total"],
                "DCGM_FI_DEV_SM_CLOCK": g["sm_clock_mhz"],
                "DCGM_FI_DEV_MEM_CLOCK": g["mem_clock_mhz"],
                "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": g["pcie_replay_total"],
                "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": g["ecc_sbe_volatile_total"],
                "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": g["ecc_dbe_volatile_total"],
                "DCGM_FI_DEV_XID_ERRORS": 0,
            }
            for name, value in want.items():
                key = name + dcgm_labels(header, i)
                self.assertTrue(key in m, f"{key} missing")
                self.assertAlmostEqual(m[key], value, places=6, msg=key)
            self.assertEqual(m[f'gpudoctor_collect_success{{gpu="{i}"}}'], 1)
        self.assertLess(m["gpudoctor_sample_age_seconds"], 5)

    def test_metrics_have_help_type_and_the_text_content_type(self):
        path, _, _ = first_sample_scenario(self.tmp.name)
        s = self.serve(path, ["--no-db"])
        s.wait_metrics(lambda m: 'gpudoctor_collect_success{gpu="0"}' in m)
        status, ctype, body = s.get("/metrics")
        self.assertEqual(status, 200)
        self.assertTrue(ctype.startswith("text/plain; version=0.0.4"), ctype)
        self.assertIn("# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter", body)
        self.assertIn("# HELP DCGM_FI_DEV_GPU_UTIL ", body)
        self.assertIn("# TYPE gpudoctor_collect_success gauge", body)

    def test_job_counters_grow_and_add_up_to_the_jobs_gpu_time(self):
        """gpudoctor_job_*_total: the scenario's GPU processes as jobs, their
        held GPU-seconds growing with every sample, "other" beside them."""
        path, _, _ = first_sample_scenario(self.tmp.name)
        s = self.serve(path, ["--no-db"])
        held = 'gpudoctor_job_gpu_held_seconds_total'

        def jobs(m):
            return {k: v for k, v in m.items() if k.startswith(held + "{")}
        first = jobs(s.wait_metrics(
            lambda m: any(v > 0 for v in jobs(m).values())))
        time.sleep(1.0)
        later = jobs(s.metrics())
        own = [k for k in later if 'job_key="other"' not in k]
        self.assertTrue(own, later)
        self.assertLessEqual(len(own), 10)
        self.assertIn(f'{held}{{job_key="other",job_name="other"}}', later)
        for k, v in first.items():
            if k in later:
                self.assertGreaterEqual(later[k], v, k)
        self.assertGreater(sum(later.values()), sum(first.values()))
        self.assertTrue(any(k.startswith("gpudoctor_job_energy_joules_total{")
                            for k in s.metrics()))

    def test_hostname_names_the_node_on_every_series_and_in_the_api(self):
        """--hostname: the name a fleet's Prometheus joins this node by, on
        dcgm-exporter's series and gpudoctor's own alike."""
        path, header, _ = first_sample_scenario(self.tmp.name)
        s = self.serve(path, ["--no-db", "--hostname", "gpu-node-7.dc1"])
        s.wait_metrics(lambda m: 'gpudoctor_collect_success{gpu="0"}' in m)
        body = s.get("/metrics")[2]
        series = [l for l in body.splitlines() if l and not l.startswith("#")]
        self.assertGreater(len(series), 50)
        for line in series:
            self.assertIn('Hostname="gpu-node-7.dc1"', line)
        self.assertIn('gpudoctor_sample_age_seconds{Hostname="gpu-node-7.dc1"} ', body)
        self.assertEqual(s.get_json("/api/v1/status")[1]["header"]["host"]["hostname"],
                         "gpu-node-7.dc1")
        bad = subprocess.run([GPUDOCTOR, "serve", "--no-db", "--hostname", 'a"b'],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(bad.returncode, 2, bad.stderr)
        self.assertIn("--hostname", bad.stderr)
        self.assertIn("is not a node name", bad.stderr)


class Api(ServeCase):
    def test_status_processes_findings_and_healthz(self):
        path, header, sample = first_sample_scenario(self.tmp.name)
        s = self.serve(path, ["--no-db"])
        s.wait_metrics(lambda m: 'gpudoctor_collect_success{gpu="0"}' in m)
        status, st = s.get_json("/api/v1/status")
        self.assertEqual(status, 200)
        self.assertEqual(st["header"]["gpus"][2]["uuid"], header["gpus"][2]["uuid"])
        self.assertEqual(st["sample"]["gpus"][0]["util_pct"], sample["gpus"][0]["util_pct"])
        status, ps = s.get_json("/api/v1/processes?gpu=2")
        self.assertEqual(status, 200)
        self.assertEqual(sorted(p["pid"] for p in ps["processes"]),
                         sorted(p["pid"] for p in sample["gpus"][2]["processes"]))
        status, fs = s.get_json("/api/v1/findings")
        self.assertEqual(status, 200)
        self.assertIn("findings", fs)
        # Beside the findings, what serve could not judge and why: here the
        # kernel log is not read (--kmsg none), so the Xid rule says so.
        deadline = time.time() + 20
        while fs.get("evaluated_at") is None and time.time() < deadline:
            time.sleep(0.2)
            _, fs = s.get_json("/api/v1/findings")
        reasons = {n["id"]: n["reason"] for n in fs["not_judged"]}
        self.assertEqual(reasons.get("xid-error"),
                         "needs the kernel log's Xid lines; not read (--kmsg none)", fs)
        status, hz = s.get_json("/healthz")
        self.assertEqual((status, hz["status"]), (200, "ok"))

    def test_errors_are_json_404_400(self):
        path, _, _ = first_sample_scenario(self.tmp.name)
        s = self.serve(path, ["--no-db"])
        for url, code in [("/nope", 404), ("/api/v1/processes?gpu=abc", 400),
                          ("/api/v1/history?metric=gpu.nope", 400)]:
            status, ctype, body = s.get(url)
            self.assertEqual(status, code, url)
            self.assertTrue(ctype.startswith("application/json"), ctype)
            err = json.loads(body)["error"]
            self.assertNotIn("\n", err)

    def test_no_db_answers_history_from_the_minutes_it_holds(self):
        """--no-db writes nothing, yet the charts, the history API and the
        trace download answer for the samples serve holds in memory."""
        path, _, sample = first_sample_scenario(self.tmp.name)
        s = self.serve(path, ["--no-db"])
        self.assertIn('db="none (the last 15m in memory)"', s.wait_log(r'msg="serving"'))
        end = time.time() + 20
        while time.time() < end:
            status, h = s.get_json("/api/v1/history?metric=gpu.util_pct,gpu.temp_c&since=1h")
            self.assertEqual(status, 200, h)
            util = [x for x in h["results"][0]["series"] if x["gpu"] == 0]
            if util and len(util[0]["points"]) >= 3:
                break
            time.sleep(0.1)
        self.assertEqual(h["kept_in_memory_s"], 900, h)
        self.assertEqual(h["results"][0]["metric"], "gpu.util_pct")
        self.assertGreaterEqual(len(util[0]["points"]), 3, h)
        self.assertEqual({v for _, v in util[0]["points"]}, {sample["gpus"][0]["util_pct"]})
        temp = [x for x in h["results"][1]["series"] if x["gpu"] == 0][0]
        self.assertEqual({v for _, v in temp["points"]}, {sample["gpus"][0]["temp_c"]})
        # The trace download is the same samples, a valid trace.
        status, ctype, body = s.get("/api/v1/export?since=1h&compress=none")
        self.assertEqual(status, 200, body[:200])
        lines = [json.loads(l) for l in body.splitlines() if l.strip()]
        self.assertIn("gpus", lines[0])
        self.assertGreaterEqual(len(lines) - 1, 3)
        # No file was written anywhere near.
        self.assertEqual([f for f in os.listdir(self.tmp.name) if ".db" in f], [])

    def test_oversized_and_garbage_requests_are_refused_and_it_keeps_serving(self):
        path, _, _ = first_sample_scenario(self.tmp.name)
        s = self.serve(path, ["--no-db"])
        conn = http.client.HTTPConnection(s.host, s.port, timeout=20)
        conn.request("POST", "/metrics", body=b"x" * (1 << 20))
        r = conn.getresponse()
        self.assertEqual(r.status, 413)
        r.read()
        conn.close()
        status, _, _ = s.get("/metrics?" + "a" * 20000)
        self.assertEqual(status, 414)
        with socket.create_connection((s.host, s.port), timeout=10) as sock:
            # (not NUL first: a line starting with NUL reads as empty, and
            # empty lines before a request are skipped, RFC 9112 2.2)
            sock.sendall(b"\xff\x00GARBAGE \r\n\r\n")
            reply = sock.recv(200)
        self.assertTrue(reply.startswith(b"HTTP/1.1 400"), reply)
        self.assertEqual(s.get("/healthz")[0], 200)
        self.assertIsNone(s.proc.poll())

    def test_history_is_stored_and_answered(self):
        path, _, sample = first_sample_scenario(self.tmp.name)
        db = os.path.join(self.tmp.name, "h.db")
        s = self.serve(path, ["--db", db])
        # Samples are written in batches; wait for some to land.
        end = time.time() + 20
        while time.time() < end:
            status, body = s.get_json("/api/v1/history?metric=gpu.util_pct&gpu=0&since=1h")
            self.assertEqual(status, 200, body)
            if body["series"] and body["series"][0]["points"]:
                break
            time.sleep(0.3)
        self.assertEqual(body["metric"], "gpu.util_pct")
        self.assertEqual(body["series"][0]["gpu"], 0)
        self.assertEqual(body["series"][0]["points"][0][1], sample["gpus"][0]["util_pct"])
        status, body = s.get_json("/api/v1/history?metric=gpu.nonsense")
        self.assertEqual(status, 400, body)
        self.assertEqual(s.stop(), 0)
        self.assertTrue(os.path.exists(db))


class FaultyGpus(ServeCase):
    def timed_scrape(self, s):
        t0 = time.monotonic()
        status, _, body = s.get("/metrics")
        return time.monotonic() - t0, status, body

    def test_hung_gpu_never_blocks_a_scrape(self):
        # Every NVML call for GPU 1 blocks 30 s from scenario time 1 s on.
        path, header, _ = first_sample_scenario(
            self.tmp.name, faults=[{"gpu": 1, "hang_s": 30, "after_s": 1.0}])
        s = self.serve(path, ["--no-db"])
        s.wait_metrics(lambda m: m.get('gpudoctor_collect_success{gpu="1"}') == 0
                       and m.get('gpudoctor_collect_success{gpu="0"}') == 1)
        # A functional bound, not a benchmark: the hung GPU's 30 s must not
        # leak into scrapes. Each stays far under the 300 ms NVML deadline;
        # the best of three is under 100 ms.
        times = []
        for _ in range(3):
            dt, status, body = self.timed_scrape(s)
            self.assertEqual(status, 200)
            times.append(dt)
            m = parse_metrics(body)
            self.assertNotIn("DCGM_FI_DEV_GPU_UTIL" + dcgm_labels(header, 1), m)
            self.assertIn("DCGM_FI_DEV_GPU_UTIL" + dcgm_labels(header, 0), m)
        self.assertLess(max(times), 1.0, times)
        self.assertLess(min(times), 0.1, times)
        # Nor does the hung read hold up shutdown.
        t0 = time.monotonic()
        self.assertEqual(s.stop(), 0)
        self.assertLess(time.monotonic() - t0, 5)

    def test_lost_gpu_goes_stale_and_fires_gpu_lost(self):
        path, header, _ = first_sample_scenario(
            self.tmp.name, faults=[{"gpu": 2, "lost_after_s": 1.0}])
        cfg = os.path.join(self.tmp.name, "serve.toml")
        with open(cfg, "w") as f:
            f.write("[alerting]\nevaluate_every_s = 0.5\n")
        s = self.serve(path, ["--no-db", "--config", cfg])
        m = s.wait_metrics(lambda m: m.get('gpudoctor_gpu_lost{gpu="2"}') == 1)
        self.assertEqual(m['gpudoctor_collect_success{gpu="2"}'], 0)
        self.assertNotIn("DCGM_FI_DEV_GPU_TEMP" + dcgm_labels(header, 2), m)
        dt, status, _ = self.timed_scrape(s)
        self.assertEqual(status, 200)
        self.assertLess(dt, 1.0)
        m = s.wait_metrics(lambda m: m.get(
            'gpudoctor_alert{id="gpu-lost",severity="critical",gpu="2",state="firing"}') == 1)
        status, fs = s.get_json("/api/v1/findings")
        lost = [f for f in fs["findings"] if f["id"] == "gpu-lost"]
        self.assertEqual(lost[0]["gpus"], [2])
        self.assertEqual(lost[0]["alert"]["state"], "firing")
        s.wait_log(r'msg="alert firing" id=gpu-lost severity=critical gpu=2')


class Signals(ServeCase):
    def test_sigterm_and_sigint_exit_zero(self):
        path, _, _ = first_sample_scenario(self.tmp.name)
        for sig in (signal.SIGTERM, signal.SIGINT):
            s = self.serve(path, ["--no-db"])
            s.wait_metrics(lambda m: 'gpudoctor_collect_success{gpu="0"}' in m)
            self.assertEqual(s.stop(sig), 0, "\n".join(s.log()))
            self.assertTrue(any('msg="stopped"' in l for l in s.log()))

    def test_sighup_reloads_config_and_keeps_old_one_when_bad(self):
        path, _, _ = first_sample_scenario(
            self.tmp.name, faults=[{"gpu": 2, "lost_after_s": 0.5}])
        cfg = os.path.join(self.tmp.name, "serve.toml")
        with open(cfg, "w") as f:  # gpu-lost must hold an hour: stays pending
            f.write("[alerting]\nevaluate_every_s = 0.5\nfor_critical_s = 3600\n")
        s = self.serve(path, ["--no-db", "--config", cfg])
        s.wait_metrics(lambda m: m.get(
            'gpudoctor_alert{id="gpu-lost",severity="critical",gpu="2",state="pending"}') == 1)
        with open(cfg, "w") as f:
            f.write("[alerting]\nevaluate_every_s = 0.5\nfor_critical_s = 0\n")
        n = len(s.log())
        s.proc.send_signal(signal.SIGHUP)
        s.wait_log(r'msg="config reloaded"', after=n)
        s.wait_metrics(lambda m: m.get(
            'gpudoctor_alert{id="gpu-lost",severity="critical",gpu="2",state="firing"}') == 1)
        with open(cfg, "w") as f:
            f.write("[alerting\nbroken = \n")
        n = len(s.log())
        s.proc.send_signal(signal.SIGHUP)
        line = s.wait_log(r"config reload failed", after=n)
        self.assertIn("serve.toml", line)
        self.assertEqual(s.get("/healthz")[0], 200)
        self.assertEqual(s.stop(), 0)

    def test_node_health_per_gpu_agrees_with_metrics_and_findings(self):
        """/api/v1/health: a lost GPU and one NVML wants reset are
        unhealthy, the others as their firing findings say, never healthy
        before the rules ran; gpudoctor_gpu_health says the same."""
        header, samples = load_scenario(scenario_4gpu())
        header["faults"] = [{"gpu": 2, "lost_after_s": 0.5}]
        sample = samples[0]
        next(g for g in sample["gpus"] if g["index"] == 1)["recovery_action"] = "gpu_reset"
        path = write_scenario(header, [sample], self.tmp.name)
        cfg = os.path.join(self.tmp.name, "serve.toml")
        with open(cfg, "w") as f:
            f.write("[alerting]\nevaluate_every_s = 0.5\n")
        s = self.serve(path, ["--no-db", "--config", cfg])
        end = time.time() + 20
        while time.time() < end:
            status, h = s.get_json("/api/v1/health")
            self.assertEqual(status, 200, h)
            if h["evaluated_at"] is not None and h["gpus"][2]["reason"].startswith("the GPU is lost"):
                break
            time.sleep(0.1)
        states = {g["gpu"]: g for g in h["gpus"]}
        self.assertEqual(sorted(states), [0, 1, 2, 3])
        self.assertEqual(states[1]["state"], "unhealthy", h)
        self.assertIn("NVML asks for gpu_reset", states[1]["reason"])
        self.assertEqual(states[1]["recovery_action"], "gpu_reset")
        self.assertEqual(states[2]["state"], "unhealthy", h)
        self.assertEqual(h["state"], "unhealthy")
        self.assertEqual(states[0]["uuid"], header["gpus"][0]["uuid"])
        _, fs = s.get_json("/api/v1/findings")
        for gpu in (0, 3):
            firing = sorted({f["id"] for f in fs["findings"]
                             if gpu in f["gpus"] and f["severity"] in ("warning", "critical")
                             and (f.get("alert") or {}).get("state") == "firing"})
            if not firing:
                self.assertEqual(states[gpu]["state"], "healthy", (gpu, h, fs))
            self.assertEqual(sorted(states[gpu]["findings"]), firing, (gpu, h, fs))
        m = s.metrics()
        for gpu, g in states.items():
            on = [k for k, v in m.items() if k.startswith("gpudoctor_gpu_health{")
                  and f'gpu="{gpu}"' in k and v == 1]
            self.assertEqual(len(on), 1, on)
            self.assertIn(f'state="{g["state"]}"', on[0])

    def test_bad_flags_and_busy_port_are_one_line_errors(self):
        path, _, _ = first_sample_scenario(self.tmp.name)
        env = dict(os.environ, FAKE_NVML_SCENARIO=path)
        base = [GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none", "serve", "--no-db"]
        for extra in (["--listen", "nonsense:port"], ["--alertmanager", "am:9093"],
                      ["--retention", "forever"]):
            p = subprocess.run(base + extra, env=env, capture_output=True, text=True,
                               timeout=30)
            self.assertNotEqual(p.returncode, 0, extra)
            errors = [l for l in p.stderr.splitlines() if l.startswith("gpudoctor:")]
            self.assertEqual(len(errors), 1, p.stderr)
        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen(1)
            port = busy.getsockname()[1]
            p = subprocess.run(base + ["--listen", f"127.0.0.1:{port}"], env=env,
                               capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 1)
        self.assertIn(f"cannot listen on 127.0.0.1:{port}", p.stderr)


class FakeAlertmanager:
    """Records the JSON bodies POSTed to /api/v2/alerts."""

    def __init__(self):
        self.bodies = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(n)
                if self.path == "/api/v2/alerts":
                    outer.bodies.append(json.loads(body))
                    self.send_response(200)
                else:
                    self.send_response(404)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def alerts(self):
        return [a for body in list(self.bodies) for a in body]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Alerting(ServeCase):
    def test_lost_gpu_alert_reaches_alertmanager(self):
        am = FakeAlertmanager()
        self.addCleanup(am.close)
        path, header, _ = first_sample_scenario(
            self.tmp.name, faults=[{"gpu": 2, "lost_after_s": 1.0}])
        cfg = os.path.join(self.tmp.name, "serve.toml")
        with open(cfg, "w") as f:
            f.write("[alerting]\nevaluate_every_s = 0.5\nresend_every_s = 1\n")
        s = self.serve(path, ["--no-db", "--config", cfg, "--alertmanager", am.url])
        end = time.time() + 30
        while time.time() < end and len([a for a in am.alerts()
                                         if a["labels"]["alertname"] == "gpu-lost"]) < 2:
            time.sleep(0.2)
        lost = [a for a in am.alerts() if a["labels"]["alertname"] == "gpu-lost"]
        self.assertGreaterEqual(len(lost), 2, "not re-sent while firing: %r" % am.alerts())
        a = lost[0]
        self.assertEqual(a["labels"]["severity"], "critical")
        self.assertEqual(a["labels"]["gpu"], "2")
        self.assertTrue(a["labels"]["instance"].endswith(f":{s.port}"))
        self.assertTrue(a["annotations"]["summary"])
        self.assertRegex(a["startsAt"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
        self.assertGreater(a["endsAt"], a["startsAt"])
        self.assertTrue(a["generatorURL"].endswith("/api/v1/findings"))
        self.assertEqual(s.stop(), 0)


if __name__ == "__main__":
    unittest.main()
