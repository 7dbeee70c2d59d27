"""History storage faults, end to end: serve on a tmpfs that fills up
(a private mount namespace), corrupt history blocks and pending batches,
a GPU that goes stale. serve must keep running, say what is degraded in
/metrics, /healthz and its log, and lose nothing it could keep."""
import errno
import json
import os
import re
import sqlite3
import tempfile
import subprocess
import sys
import threading
import time
import unittest

from gd_e2e import FAKE_NVML, GPUDOCTOR
from test_export import STORE_FILL, TRACEGEN, gd
from test_serve import Serve, first_sample_scenario, parse_metrics

CLK_TCK = os.sysconf("SC_CLK_TCK")
# A zstd frame header followed by garbage: a torn write or a bad sector.
GARBAGE = bytes.fromhex("28b52ffd0058deadbeefdeadbeef0102030405")


class PrefixedServe(Serve):
    """Serve started through `prefix` (e.g. unshare + mount) that execs
    gpudoctor, so the Popen pid is serve's own."""

    def __init__(self, scenario, args, prefix, interval="200ms"):
        env = dict(os.environ)
        env["FAKE_NVML_SCENARIO"] = scenario
        cmd = prefix + [GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none",
                        "--interval", interval, "--deadline", "300ms", "serve",
                        "--listen", "127.0.0.1:0"] + list(args)
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


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


def read_trace(path):
    with open(path) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    return lines[0], lines[1:]


class StoreCase(unittest.TestCase):
    def setUp(self):
        # A missing prerequisite is a failure, not a skip.
        self.assertTrue(FAKE_NVML and os.path.exists(FAKE_NVML),
                        "fake libnvidia-ml.so.1 not built (FAKE_NVML_LIB)")
        self.tmp = tempfile.TemporaryDirectory()
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.kill()
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def serve(self, scenario, args, prefix=(), interval="200ms"):
        s = PrefixedServe(scenario, args, list(prefix), interval)
        self.servers.append(s)
        return s


class DiskFull(StoreCase):
    def test_full_disk_degrades_then_recovers_without_losing_samples(self):
        self.assertEqual(os.geteuid(), 0, "needs root for unshare -m and mount")
        mnt = self.path("mnt")
        os.mkdir(mnt)
        scenario, _, _ = first_sample_scenario(self.tmp.name)
        prefix = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                  f'mount -t tmpfs -o size=4m tmpfs "{mnt}" && exec "$0" "$@"']
        s = self.serve(scenario, ["--db", os.path.join(mnt, "history.db")], prefix,
                       interval="100ms")
        pid = s.proc.pid
        # The tmpfs as serve sees it (its own mount namespace).
        inside = f"/proc/{pid}/root{mnt}"
        m = s.wait_metrics(lambda m: m.get("gpudoctor_store_writable") == 1
                           and m.get("gpudoctor_collections_total", 0) >= 25)
        t_full = time.time()

        filler = os.path.join(inside, "filler")
        with open(filler, "wb") as f:
            chunk = b"\0" * 65536
            try:
                while True:
                    f.write(chunk)
                    f.flush()
            except OSError as e:
                self.assertEqual(e.errno, errno.ENOSPC)
        cpu0, wall0 = cpu_seconds(pid), time.monotonic()

        m = s.wait_metrics(lambda m: m.get("gpudoctor_store_writable") == 0, timeout=10)
        self.assertGreater(m["gpudoctor_store_write_errors_total"], 0)
        status, hz = s.get_json("/healthz")
        self.assertEqual(status, 200, hz)  # degraded, not a restart reason
        self.assertEqual(hz["status"], "degraded")
        self.assertIn({"component": "store", "problem": "not writable"}, hz["degraded"])
        s.wait_log(r'msg="history not writable; keeping samples in memory"')
        time.sleep(6)
        m = s.metrics()
        self.assertEqual(m["gpudoctor_store_writable"], 0)
        self.assertGreater(m["gpudoctor_store_pending_bytes"], 0)
        self.assertLessEqual(m["gpudoctor_store_pending_bytes"], 32 * 1024 * 1024)
        self.assertEqual(m["gpudoctor_store_dropped_samples_total"], 0)
        # Functional bound, not a benchmark: sampling at 10 Hz with a full
        # disk stays far below a core (the backlog is not re-encoded).
        cpu = (cpu_seconds(pid) - cpu0) / (time.monotonic() - wall0)
        print(f"disk full: serve used {cpu:.3f} of a core, pending "
              f"{m['gpudoctor_store_pending_bytes']:.0f} bytes", file=sys.stderr)
        self.assertLess(cpu, 0.5, f"serve used {cpu:.2f} of a core while the disk was full")

        os.remove(filler)
        t_free = time.time()
        s.wait_metrics(lambda m: m.get("gpudoctor_store_writable") == 1
                       and m.get("gpudoctor_store_pending_bytes") == 0, timeout=20)
        s.wait_log(r'msg="history writable again"')
        status, hz = s.get_json("/healthz")
        self.assertEqual(hz["status"], "ok", hz)
        time.sleep(2.5)  # more batches after the recovery
        t_end = time.time()

        out = self.path("out.jsonl")
        # Export inside serve's mount namespace (SQLite resolves the
        # /proc/PID/root link, so that path would not reach the tmpfs).
        p = subprocess.run(["nsenter", "-t", str(pid), "-m", GPUDOCTOR, "export", "--db",
                            os.path.join(mnt, "history.db"), "--since", "0", "-o", out],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        _, samples = read_trace(out)
        ts = [x["t"] for x in samples]
        self.assertTrue(any(t < t_full for t in ts), "no samples from before")
        self.assertTrue(any(t_full + 1 < t < t_free - 1 for t in ts), "none from during")
        self.assertTrue(any(t_free + 1 < t < t_end for t in ts), "none from after")
        # Nothing lost within the bound: no hole in the series.
        gaps = [b - a for a, b in zip(ts, ts[1:])]
        self.assertLess(max(gaps), 1.5, max(gaps))
        self.assertEqual(s.stop(), 0)


class Corruption(StoreCase):
    def make_db(self):
        self.assertTrue(os.path.exists(STORE_FILL) and os.path.exists(TRACEGEN),
                        "gd_store_fill / gpudoctor-tracegen not built")
        trace = self.path("t.jsonl")
        start = (int(time.time()) // 600 - 6) * 600  # an hour ago, window-aligned
        subprocess.run([TRACEGEN, "--scenario", "memory-leak", "--gpus", "2",
                        "--duration", "30m", "--interval", "1s", "--start", str(start),
                        "-o", trace, "-q"], check=True, timeout=120)
        db = self.path("h.db")
        p = subprocess.run([STORE_FILL, "--db", db, "--trace", trace],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        return db, start

    def test_corrupt_block_and_batch(self):
        db, start = self.make_db()
        with sqlite3.connect(db) as c:
            self.assertEqual(c.execute("SELECT count(*) FROM blocks").fetchone()[0], 2)
            self.assertEqual(c.execute("SELECT count(*) FROM pending").fetchone()[0], 60)
            c.execute("UPDATE blocks SET num = ?, rest = ? WHERE t0 = ?",
                      (GARBAGE, GARBAGE, start + 600))
            c.execute("UPDATE pending SET num = ?, rest = ? WHERE seq = "
                      "(SELECT min(seq) FROM pending)", (GARBAGE, GARBAGE))
        c.close()

        p = gd("db", "check", "--db", db, "--json")
        self.assertEqual(p.returncode, 1, p.stderr)
        check = json.loads(p.stdout)
        self.assertFalse(check["clean"])
        self.assertEqual(sorted(r["table"] for r in check["corrupt"]), ["blocks", "pending"])

        # export before any repair: the rest, a note on stderr, exit 1.
        out = self.path("before.jsonl")
        p = gd("export", "--db", db, "--since", "0", "-o", out)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("skipped 2 corrupt history block", p.stderr)
        self.assertEqual(len(read_trace(out)[1]), 1800 - 600 - 10)

        # serve starts (the bad batch goes to quarantine) and says so.
        scenario, _, _ = first_sample_scenario(self.tmp.name)
        s = self.serve(scenario, ["--db", db])
        s.wait_log(r'msg="corrupt pending history moved to quarantine"')
        m = s.wait_metrics(lambda m: "gpudoctor_store_quarantined_blocks_total" in m)
        self.assertEqual(m["gpudoctor_store_quarantined_blocks_total"], 1)
        status, hz = s.get_json("/healthz")
        self.assertEqual(status, 200)
        self.assertIn({"component": "store", "problem": "corrupt data quarantined"},
                      hz["degraded"])
        status, h = s.get_json("/api/v1/history?metric=gpu.util_pct&gpu=0&since=0")
        self.assertEqual(status, 200, h)
        self.assertEqual(h["skipped_blocks"], 1)
        self.assertGreaterEqual(len(h["series"][0]["points"]), 1800 - 600 - 10)
        self.assertNotIn(self.tmp.name, s.get("/api/v1/history?metric=nope&since=0")[2])
        self.assertEqual(s.stop(), 0)

        p = gd("db", "repair", "--db", db)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("moved 1 corrupt row(s) to quarantine", p.stdout)
        p = gd("db", "check", "--db", db)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("clean", p.stdout)

        out = self.path("after.jsonl")
        p = gd("export", "--db", db, "--since", "0", "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertGreater(len(read_trace(out)[1]), 1800 - 600 - 10)

    def test_export_since_zero_is_the_epoch_and_empty_says_so(self):
        db, start = self.make_db()
        out = self.path("all.jsonl")
        p = gd("export", "--db", db, "--since", "0", "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(read_trace(out)[1]), 1800)
        p = gd("export", "--db", db, "--since", str(start - 7200), "--until",
               str(start - 3600), "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("no samples", p.stderr)

    def test_db_usage_errors(self):
        p = gd("db", "check", "--db", self.path("missing.db"))
        self.assertEqual(p.returncode, 1)
        self.assertIn("missing.db", p.stderr)
        for args in (["db"], ["db", "check", "--bogus"]):
            p = gd(*args)
            self.assertNotIn(p.returncode, (0, 1), args)  # a usage error
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)


class StaleGpu(StoreCase):
    def test_stale_gpu_in_healthz_and_logged_once(self):
        # Every NVML call for GPU 1 blocks 30 s from scenario time 1 s on.
        scenario, _, _ = first_sample_scenario(
            self.tmp.name, faults=[{"gpu": 1, "hang_s": 30, "after_s": 1.0}])
        s = self.serve(scenario, ["--no-db"])
        s.wait_metrics(lambda m: m.get('gpudoctor_collect_success{gpu="1"}') == 0)
        status, hz = s.get_json("/healthz")
        self.assertEqual(status, 200, hz)
        self.assertEqual(hz["status"], "degraded")
        self.assertIn({"component": "gpu", "gpu": 1, "problem": "stale"}, hz["degraded"])
        self.assertNotIn("store", hz)
        time.sleep(2)  # ten more samples
        stale = [l for l in s.log() if re.search(r'msg="gpu stale" gpu=1\b', l)]
        self.assertEqual(len(stale), 1, "\n".join(s.log()))
        self.assertFalse(any("gpu=0" in l and "gpu stale" in l for l in s.log()))
        self.assertEqual(s.stop(), 0)


if __name__ == "__main__":
    unittest.main()
