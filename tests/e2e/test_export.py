"""export, end to end: a history DB (filled the way `serve --db` fills it,
by the gd_store_fill helper) exported back as a trace that `diagnose --from`
reads with the same findings as the original trace."""
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import unittest

from gd_e2e import E2E, FAKE_NVML, GPUDOCTOR, scenario_4gpu


def _tool(env_name, *relative):
    """A build output next to gpudoctor's (build/src/cli/gpudoctor)."""
    path = os.environ.get(env_name)
    if path:
        return path
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(GPUDOCTOR))))
    return os.path.join(build, *relative)


STORE_FILL = _tool("GD_STORE_FILL", "tests", "store", "gd_store_fill")
TRACEGEN = _tool("GD_TRACEGEN", "tools", "tracegen", "gpudoctor-tracegen")


def gd(*args, timeout=120, env=None):
    return subprocess.run([GPUDOCTOR] + list(args), capture_output=True, text=True,
                          timeout=timeout, env=env)


def read_lines(path):
    if path.endswith(".zst"):
        text = subprocess.run(["zstd", "-dc", path], capture_output=True, text=True,
                              check=True).stdout
    else:
        with open(path) as f:
            text = f.read()
    lines = [json.loads(l) for l in text.splitlines() if l.strip()]
    return lines[0], lines[1:]


class Export(unittest.TestCase):
    def setUp(self):
        for tool in (STORE_FILL, TRACEGEN):
            if not os.path.exists(tool):
                self.fail(f"{tool} not built")
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def trace(self, scenario, gpus=2, duration="30m", start=None, interval="1s"):
        out = self.path(f"{scenario}.jsonl")
        args = [TRACEGEN, "--scenario", scenario, "--gpus", str(gpus), "--duration", duration,
                "--interval", interval, "-o", out, "-q"]
        if start is not None:
            args += ["--start", str(start)]
        subprocess.run(args, check=True, timeout=120)
        return out

    def fill(self, trace, db, *extra):
        p = subprocess.run([STORE_FILL, "--db", db, "--trace", trace] + list(extra),
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)

    def diagnose(self, trace):
        p = gd("diagnose", "--from", trace, "--json")
        self.assertIn(p.returncode, (0, 1, 2), p.stderr)
        return p.returncode, sorted({f["id"] for f in json.loads(p.stdout)["findings"]})

    def test_export_reproduces_the_trace_and_its_diagnosis(self):
        trace = self.trace("memory-leak")
        db = self.path("h.db")
        self.fill(trace, db)
        header, samples = read_lines(trace)
        t0, t1 = samples[0]["t"], samples[-1]["t"]
        out = self.path("out.jsonl")
        p = gd("export", "--db", db, "--since", str(t0), "--until", str(t1), "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"exported {len(samples)} samples", p.stderr)
        got_header, got = read_lines(out)
        self.assertEqual(got_header, header)
        self.assertEqual(got, samples)
        want = self.diagnose(trace)
        self.assertIn("memory-leak", want[1])
        self.assertEqual(self.diagnose(out), want)

    def test_since_as_duration_and_utc_time(self):
        now = time.time()
        start = int(now) - 7200
        trace = self.trace("healthy-training", duration="2h", start=start, interval="10s")
        db = self.path("h.db")
        self.fill(trace, db)
        out = self.path("last.jsonl")
        p = gd("export", "--db", db, "--since", "30m", "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        _, got = read_lines(out)
        self.assertTrue(got)
        self.assertGreaterEqual(got[0]["t"], now - 1800)
        self.assertLessEqual(got[0]["t"], now - 1800 + 20)
        # The same window given as UTC times.
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + 3600))
        until = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(start + 3600 + 600))
        p = gd("export", "--db", db, "--since", since, "--until", until, "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        _, got = read_lines(out)
        self.assertEqual(len(got), 61)
        self.assertEqual(got[0]["t"], start + 3600)

    def test_zstd_output_reads_back(self):
        trace = self.trace("xid-events", duration="10m")
        db = self.path("h.db")
        self.fill(trace, db)
        out = self.path("out.jsonl.zst")
        # A terminal line: local time with its zone (a POSIX TZ, one hour
        # east of UTC, that needs no tzdata).
        p = gd("export", "--db", db, "-o", out, env=dict(os.environ, TZ="CET-1"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(read_lines(out)[1], read_lines(trace)[1])
        # Without --since the line gives the data's range, not 1970's.
        _, samples = read_lines(trace)
        first, last = (time.strftime("%Y-%m-%d %H:%M:%S CET", time.gmtime(int(s["t"]) + 3600))
                       for s in (samples[0], samples[-1]))
        self.assertIn(f"({first} .. {last})", p.stderr)
        code, ids = self.diagnose(out)
        self.assertIn("xid-error", ids)

    def test_downsampled_history_still_diagnoses(self):
        trace = self.trace("thermal-throttling", gpus=1, duration="2h")
        db = self.path("h.db")
        # Two days later: everything is minute averages.
        _, samples = read_lines(trace)
        self.fill(trace, db, "--retention", "1e9", "--maintain", str(samples[-1]["t"] + 2 * 86400))
        out = self.path("out.jsonl")
        p = gd("export", "--db", db, "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        _, got = read_lines(out)
        self.assertEqual(len(got), 120)
        for a, b in zip(got, got[1:]):
            self.assertEqual(b["t"] - a["t"], 60)
        minute = [s["gpus"][0]["temp_c"] for s in samples[:60]]
        self.assertEqual(got[0]["gpus"][0]["temp_c"], int(sum(minute) / 60 + 0.5))
        code, ids = self.diagnose(out)
        self.assertIn("thermal-throttling", ids)

    def test_memory_health_survives_the_minute_tier(self):
        # Remapped rows that grew, a bank running out of spare rows and a
        # recovery action that changed must still be there once the history
        # is minute averages: a counter keeps its last value, not a mean.
        for scenario, finding in (("rows-remapping-growing", "memory-degrading"),
                                  ("recovery-reset", "recovery-action-required")):
            with self.subTest(scenario=scenario):
                # Started 45 s off the minute, so the counters step late
                # inside a minute, not on its boundary.
                trace = self.trace(scenario, gpus=2, duration="2h", start=1732262445)
                db = self.path(scenario + ".db")
                _, samples = read_lines(trace)
                self.fill(trace, db, "--retention", "1e9", "--maintain",
                          str(samples[-1]["t"] + 2 * 86400))
                out = self.path(scenario + "-out.jsonl")
                p = gd("export", "--db", db, "-o", out)
                self.assertEqual(p.returncode, 0, p.stderr)
                _, got = read_lines(out)
                minutes = sum(1 for a, b in zip(got, got[1:]) if b["t"] - a["t"] == 60)
                self.assertGreaterEqual(minutes, 100)
                # Each minute ends at a raw sample: its counters, histogram and
                # recovery action are that sample's.
                raw = {s["t"]: s["gpus"][0] for s in samples}
                for minute in got:
                    want = raw[minute["t"]]
                    for key in ("remapped_rows_correctable_total",
                                "remapped_rows_uncorrectable_total", "row_remap_histogram",
                                "recovery_action", "ecc_sbe_aggregate_total"):
                        self.assertEqual(minute["gpus"][0].get(key), want.get(key),
                                         f"{key} at t={minute['t']}")
                self.assertNotEqual(got[0]["gpus"][0], got[-1]["gpus"][0])
                self.assertIn(finding, self.diagnose(out)[1])

    def test_bad_input_is_one_line_and_non_zero(self):
        garbage = self.path("garbage.db")
        with open(garbage, "w") as f:
            f.write("not sqlite\n" * 1000)
        cases = [
            (["--db", self.path("missing.db"), "-o", self.path("o.jsonl")], "missing.db"),
            (["--db", garbage, "-o", self.path("o.jsonl")], "not a gpudoctor history database"),
            (["--db", garbage, "--since", "yesterday-ish", "-o", self.path("o.jsonl")],
             "yesterday-ish"),
        ]
        for args, want in cases:
            p = gd("export", *args)
            self.assertNotEqual(p.returncode, 0, args)
            lines = p.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, p.stderr)
            self.assertTrue(lines[0].startswith("gpudoctor: "), p.stderr)
            self.assertIn(want, lines[0])
        self.assertFalse(os.path.exists(self.path("missing.db")), "export created a DB")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServeKill(E2E):
    """The real daemon, killed with SIGKILL: what it had flushed exports."""

    def test_history_of_a_killed_serve_exports_and_diagnoses(self):
        db = os.path.join(self.tmp.name, "h.db")
        env = dict(os.environ, FAKE_NVML_SCENARIO=scenario_4gpu())
        serve = subprocess.Popen(
            [GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none", "--interval", "100ms",
             "serve", "--listen", f"127.0.0.1:{free_port()}", "--db", db],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            # Batches of 10 samples at 10 Hz: a commit about every second.
            time.sleep(4)
            self.assertIsNone(serve.poll(), serve.stderr.read() if serve.poll() else "")
        finally:
            serve.send_signal(signal.SIGKILL)
            serve.wait(timeout=10)
            serve.stderr.close()
        out = os.path.join(self.tmp.name, "out.jsonl")
        p = gd("export", "--db", db, "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        header, samples = read_lines(out)
        self.assertEqual(len(header["gpus"]), 4)
        self.assertGreaterEqual(len(samples), 10)
        ts = [s["t"] for s in samples]
        self.assertEqual(ts, sorted(ts))
        p = gd("diagnose", "--from", out, "--json")
        self.assertIn(p.returncode, (0, 1, 2), p.stderr)


if __name__ == "__main__":
    unittest.main()
