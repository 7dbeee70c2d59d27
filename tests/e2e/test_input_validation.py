"""Bad input anywhere is a one-line error naming the value and where it is,
with exit 2 for usage errors; nothing is guessed. Flags of every command,
config files, traces (ranges, a byte order mark, stdin), and the `ps` probe
of the serve port, which must not hang on something that never answers."""
import json
import os
import socket
import subprocess
import tempfile
import threading
import time
import unittest

from gd_e2e import (FAKE_NVML, GPUDOCTOR, NO_DRIVER, TRAINER, kill_tree, load_scenario, run,
                    scenario_4gpu, spawn_python, write_scenario)

# (arguments, text the one-line error must contain). Each must exit 2.
BAD_FLAGS = [
    (["--interval=0", "status"], "'0' is out of range 10ms..1h"),
    (["--interval", "0x10", "status"], "'0x10'"),
    (["--interval", "nan", "status"], "invalid duration 'nan'"),
    (["--interval", "999999999999h", "status"], "too long"),
    (["--interval=-1s", "status"], "'-1s'"),
    (["--deadline", "2m", "status"], "'2m' is out of range 10ms..1m"),
    (["status", "--bogus"], "--bogus"),
    (["frobnicate"], "frobnicate"),
    (["ps", "--gpu", "0x1"], "'0x1' is neither a GPU index, a GPU UUID"),
    (["ps", "--gpu", "5000"], "'5000' is out of range 0..1023"),
    (["ps", "--sort", "bogus"], "bogus"),
    (["who", "x1"], "'x1' is neither a GPU index, a GPU UUID"),
    (["kill", "0x10"], "'0x10' is not a decimal number"),
    (["kill", "+5"], "'+5' is not a decimal number"),
    (["kill", "1e3"], "'1e3' is not a decimal number"),
    (["kill", " 7"], "' 7' is not a decimal number"),
    (["kill", "99999999999"], "'99999999999' is out of range"),
    (["kill", "--gpu", "-1"], "--gpu"),
    (["kill", "--timeout", "2h", "1234"], "'2h' is out of range 0s..1h"),
    (["kill", "--signal", "BOGUS", "1234"], "BOGUS"),
    (["watch-leak", "--duration", "0"], "'0' is out of range 100ms..30d"),
    (["watch-leak", "010x"], "'010x' is not a decimal number"),
    (["record", "-o", "/dev/null", "--duration=-5s"], "invalid duration '-5s'"),
    (["record", "-o", "/dev/null", "--count", "0x5"], "'0x5' is not a decimal number"),
    (["record", "--duration", "1m"], "--output"),
    (["diagnose", "--duration", "40d"], "'40d' is out of range 1s..30d"),
    (["diagnose", "--gpu", "1e3"], "'1e3' is neither a GPU index, a GPU UUID"),
    (["diagnose", "--min-severity", "loud"], "loud"),
    (["diagnose", "--from", "/nonexistent/trace.jsonl"], "/nonexistent/trace.jsonl"),
    (["serve", "--retention", "10m"], "'10m' is out of range 1h..3650d"),
    (["serve", "--retention", "20y"], "unknown unit 'y'"),
    (["export", "--db", "/nonexistent.db", "--since", "yesterday", "-o", "-"], "'yesterday'"),
]


class Base(unittest.TestCase):
    def setUp(self):
        # A missing prerequisite is a failure, never a skip.
        self.assertTrue(FAKE_NVML and os.path.exists(FAKE_NVML),
                        "the fake libnvidia-ml.so.1 is not built (FAKE_NVML_LIB)")
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmpdir = tmp.name
        self.children = []

    def tearDown(self):
        for c in self.children:
            kill_tree(c)

    def assert_usage_error(self, p, needle):
        self.assertEqual(p.returncode, 2, f"exit {p.returncode}: {p.stderr}")
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn(needle, lines[0])

    def write(self, name, text):
        path = os.path.join(self.tmpdir, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path


class BadFlags(Base):
    def test_every_command_rejects_bad_values_with_exit_2_and_one_line(self):
        for args, needle in BAD_FLAGS:
            with self.subTest(args=args):
                p = run(args, nvml=NO_DRIVER, timeout=20)
                self.assert_usage_error(p, needle)
                self.assertEqual(p.stdout, "")

    def test_help_and_version_still_exit_0(self):
        for args in (["--help"], ["--version"], ["kill", "--help"]):
            self.assertEqual(run(args, nvml=NO_DRIVER).returncode, 0, args)

    def test_interval_help_states_its_range(self):
        p = run(["--help"], nvml=NO_DRIVER)
        self.assertIn("10ms..1h", p.stdout)


class Configs(Base):
    def healthy_trace(self):
        header, samples = load_scenario(scenario_4gpu())
        return write_scenario(header, samples, self.tmpdir)

    def test_diagnose_config_nan_negative_out_of_range_are_one_line_errors(self):
        trace = self.healthy_trace()
        for body, needle in [
            ("[input-bound]\n\nstarved_util_pct = nan\n",
             ":3: key 'input-bound.starved_util_pct': nan is not a number"),
            ("[memory-leak]\nmin_window_s = -5\n", ":2: key 'memory-leak.min_window_s': -5"),
            ("[thermal-throttling]\nmin_fraction = 7\n",
             ":2: key 'thermal-throttling.min_fraction': 7 is out of range 0..1"),
        ]:
            with self.subTest(body=body):
                cfg = self.write("site.toml", body)
                p = run(["diagnose", "--from", trace, "--config", cfg])
                self.assert_usage_error(p, cfg + needle)
                self.assertEqual(p.stdout, "")

    def test_serve_refuses_a_config_out_of_range(self):
        cfg = self.write("serve.toml", "[alerting]\nevaluate_every_s = 0\n")
        p = run(["serve", "--no-db", "--listen", "127.0.0.1:0", "--config", cfg],
                scenario=scenario_4gpu(), timeout=20)
        self.assert_usage_error(p, cfg + ":2: key 'alerting.evaluate_every_s'")


class Traces(Base):
    def trace_with(self, mutate):
        header, samples = load_scenario(scenario_4gpu())
        mutate(header, samples)
        return write_scenario(header, samples, self.tmpdir)

    def test_impossible_values_are_refused_with_file_and_line(self):
        def gpu_minus_5(h, s):
            s[0]["gpus"][0]["index"] = -5

        def xid_negative(h, s):
            s[0]["events"] = [{"kind": "xid", "gpu": 0, "code": -3}]

        def t_huge(h, s):
            s[0]["t"] = 1e308

        def duplicate_gpu(h, s):
            h["gpus"][1]["index"] = h["gpus"][0]["index"]

        for mutate, line, needle in [
            (gpu_minus_5, 2, "gpus[0].index: -5 is out of range 0..1023"),
            (xid_negative, 2, "events[0].code: -3 is out of range 1..65535"),
            (t_huge, 2, "t: 1e+308 is not a Unix time"),
            (duplicate_gpu, 1, "gpus[1].index: GPU 0 is listed twice"),
        ]:
            with self.subTest(case=mutate.__name__):
                path = self.trace_with(mutate)
                p = run(["diagnose", "--from", path])
                self.assertEqual(p.returncode, 3, p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn(f"{path}:{line}: {needle}", p.stderr)

    def test_utf8_bom_before_the_header_is_skipped(self):
        plain = self.trace_with(lambda h, s: None)
        with open(plain, encoding="utf-8") as f:
            text = f.read()
        bom = self.write("bom.jsonl", "\ufeff" + text)
        want = run(["diagnose", "--from", plain, "--json"])
        got = run(["diagnose", "--from", bom, "--json"])
        self.assertIn(want.returncode, (0, 1, 2), want.stderr)
        self.assertEqual(got.returncode, want.returncode, got.stderr)
        self.assertEqual(got.stdout, want.stdout)

    def test_record_to_stdout_round_trips_through_diagnose_from_stdin(self):
        rec = run(["--interval", "10ms", "record", "-o", "-", "--count", "3"],
                  scenario=scenario_4gpu())
        self.assertEqual(rec.returncode, 0, rec.stderr)
        path = self.write("rec.jsonl", rec.stdout)
        from_file = run(["diagnose", "--from", path, "--json"])
        e = dict(os.environ, FAKE_NVML_SCENARIO=scenario_4gpu())
        from_stdin = subprocess.run(
            [GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none", "diagnose", "--from", "-",
             "--json"], input=rec.stdout, env=e, capture_output=True, text=True, timeout=30)
        self.assertIn(from_file.returncode, (0, 1, 2), from_file.stderr)
        self.assertEqual(from_stdin.returncode, from_file.returncode, from_stdin.stderr)
        self.assertEqual(from_stdin.stdout, from_file.stdout)


class ServeProbe(Base):
    """`ps` asks serve for memory history; whatever listens on that port,
    ps answers within 1 s."""

    def listener(self, behaviour):
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(16)
        self.addCleanup(srv.close)
        stop = threading.Event()
        self.addCleanup(stop.set)
        accepted = []

        def serve():
            srv.settimeout(0.1)
            while not stop.is_set():
                try:
                    conn, _ = srv.accept()
                except OSError:
                    continue
                accepted.append(conn)
                if behaviour == "trickle":
                    threading.Thread(target=trickle, args=(conn,), daemon=True).start()

        def trickle(conn):
            # A reply that never ends: one byte every 100 ms, for 15 s.
            for b in b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"x" * 150:
                if stop.is_set():
                    break
                try:
                    conn.send(bytes([b]))
                except OSError:
                    break
                time.sleep(0.1)

        threading.Thread(target=serve, daemon=True).start()
        return f"http://127.0.0.1:{srv.getsockname()[1]}", accepted

    def gpu_process_scenario(self):
        t = spawn_python(TRAINER.format(workers=0))
        self.children.append(t)
        pid = int(t.stdout.readline().split(",")[0])
        header, samples = load_scenario(scenario_4gpu())
        for g in samples[0]["gpus"]:
            g["processes"] = []
        samples[0]["gpus"][0]["processes"] = [
            {"pid": pid, "used_bytes": 1 << 30, "type": "compute"}]
        return write_scenario(header, samples[:1], self.tmpdir)

    def test_ps_answers_within_1s_when_the_port_never_answers(self):
        scenario = self.gpu_process_scenario()
        # What the probe may add is bounded (300 ms budget); the rest is ps
        # itself, which a sanitized build on a busy CI machine makes slower.
        # So the bound is: ps without any serve, plus 1 s.
        start = time.monotonic()
        run(["ps", "--serve", ""], scenario=scenario, timeout=30, check=True)
        alone = time.monotonic() - start
        for behaviour in ("silent", "trickle"):
            with self.subTest(listener=behaviour):
                url, accepted = self.listener(behaviour)
                start = time.monotonic()
                p = run(["ps", "--serve", url], scenario=scenario, timeout=30)
                elapsed = time.monotonic() - start
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertGreaterEqual(len(accepted), 1, "ps never connected")
                self.assertLess(elapsed, alone + 1.0,
                                f"ps took {elapsed:.2f} s ({alone:.2f} s alone)")

    def test_live_diagnose_is_not_held_by_a_port_that_never_answers(self):
        # diagnose asks serve for its history with the same 300 ms probe as
        # ps: a listener that never answers (or trickles) costs it no more
        # than that, and its window is the live one alone.
        args = ["--interval", "250ms", "diagnose", "--duration", "1s", "--json"]
        start = time.monotonic()
        run(args + ["--serve", "none"], scenario=scenario_4gpu(), timeout=30)
        alone = time.monotonic() - start
        for behaviour in ("silent", "trickle"):
            with self.subTest(listener=behaviour):
                url, accepted = self.listener(behaviour)
                start = time.monotonic()
                p = run(args + ["--serve", url], scenario=scenario_4gpu(), timeout=30)
                elapsed = time.monotonic() - start
                self.assertIn(p.returncode, (0, 1, 2), p.stderr)
                self.assertGreaterEqual(len(accepted), 1, "diagnose never connected")
                self.assertNotIn("parts", json.loads(p.stdout)["window"])
                self.assertLess(elapsed, alone + 1.0,
                                f"diagnose took {elapsed:.2f} s ({alone:.2f} s alone)")


if __name__ == "__main__":
    unittest.main()
