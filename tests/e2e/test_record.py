"""record, end to end: a trace recorded under the fake reproduces the GPU
part of the scenario it replays; Ctrl-C leaves a valid file; zstd; stdout."""
import os
import signal
import subprocess
import time
import unittest

from gd_e2e import (E2E, FAKE_NVML, GPUDOCTOR, NO_DRIVER, load_scenario, read_trace, run,
                    scenario_4gpu)


def strip_nulls(x):
    if isinstance(x, dict):
        return {k: strip_nulls(v) for k, v in x.items() if v is not None}
    if isinstance(x, list):
        return [strip_nulls(v) for v in x]
    return x


class Record(E2E):
    def test_recorded_trace_reproduces_the_replayed_gpu_part(self):
        want_header, want = load_scenario(scenario_4gpu())
        out = os.path.join(self.tmp.name, "rec.jsonl")
        p = run(["--interval", "1s", "record", "-o", out, "--count", "4"],
                scenario=scenario_4gpu(), timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        header, got = load_scenario(out)
        self.assertEqual(len(got), 4)
        self.assertEqual(strip_nulls(header["gpus"]), strip_nulls(want_header["gpus"]))
        wanted = [strip_nulls(s["gpus"]) for s in want]
        matched = []
        for s in got:
            g = strip_nulls(s["gpus"])
            self.assertIn(g, wanted, "recorded GPU part is not one of the scenario's samples")
            matched.append(wanted.index(g))
        self.assertEqual(matched, sorted(matched), "replay went backwards")
        self.assertGreater(len(set(matched)), 1, "replay never advanced")
        ts = [s["t"] for s in got]
        self.assertEqual(ts, sorted(ts))

    def test_ctrl_c_ends_with_a_valid_trace(self):
        out = os.path.join(self.tmp.name, "rec.jsonl")
        env = dict(os.environ, FAKE_NVML_SCENARIO=scenario_4gpu())
        p = subprocess.Popen([GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none",
                              "--interval", "200ms", "record", "-o", out],
                             env=env, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=10)
        self.assertEqual(p.returncode, 0, err)
        header, samples = load_scenario(out)
        self.assertEqual(header["format"], "gpudoctor-trace")
        self.assertGreaterEqual(len(samples), 3)
        self.assertIn("recorded", err)

    def test_stdout_streaming_and_zstd(self):
        p = run(["--interval", "100ms", "record", "-o", "-", "--count", "2"],
                scenario=scenario_4gpu())
        self.assertEqual(p.returncode, 0, p.stderr)
        header, samples = read_trace(p.stdout)
        self.assertEqual(len(samples), 2)
        self.assertEqual(len(header["gpus"]), 4)

        out = os.path.join(self.tmp.name, "rec.jsonl.zst")
        p = run(["--interval", "100ms", "record", "-o", out, "--count", "2"],
                scenario=scenario_4gpu())
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out, "rb") as f:
            self.assertEqual(f.read(4), b"\x28\xb5\x2f\xfd", "not zstd")
        text = subprocess.run(["zstd", "-dc", out], capture_output=True, text=True,
                              check=True).stdout
        header, samples = read_trace(text)
        self.assertEqual(len(samples), 2)

    def test_record_without_driver_still_records_the_host(self):
        out = os.path.join(self.tmp.name, "host.jsonl")
        p = run(["--interval", "100ms", "record", "-o", out, "--count", "2"], nvml=NO_DRIVER)
        self.assertEqual(p.returncode, 0, p.stderr)
        header, samples = load_scenario(out)
        self.assertEqual(header["nvml_status"], "no_driver")
        self.assertIsNotNone(samples[1]["host"]["cpu_util_pct"])

    def test_unwritable_output_is_a_clear_error(self):
        p = run(["record", "-o", "/nonexistent-dir/x.jsonl", "--count", "1"], nvml=NO_DRIVER)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("/nonexistent-dir/x.jsonl", p.stderr)


if __name__ == "__main__":
    unittest.main()
