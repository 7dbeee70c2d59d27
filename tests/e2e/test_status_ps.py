"""status and ps, end to end: no driver, the fake's 4-GPU scenario, real
processes playing GPU jobs, hung GPUs, bad flags."""
import json
import os
import time
import unittest

from gd_e2e import (E2E, NO_DRIVER, TRAINER, ZOMBIE_PARENT, load_scenario, read_trace,
                    run, scenario_4gpu, spawn_python, unused_pid, write_scenario)


def known(d):
    """The fields a trace states (null and absent both mean unknown)."""
    return {k: v for k, v in d.items() if v is not None}


class NoDriver(unittest.TestCase):
    def test_status_shows_host_and_says_no_driver(self):
        p = run(["status"], nvml=NO_DRIVER)
        self.assertEqual(p.returncode, 3, p.stderr)  # no driver (docs/commands.md)
        self.assertIn("no NVIDIA driver found (libnvidia-ml.so.1", p.stdout)
        self.assertIn(f"Host {os.uname().nodename}", p.stdout)
        self.assertIn(f"{os.cpu_count()} x", p.stdout)

    def test_status_json_is_a_trace_with_no_gpus(self):
        p = run(["status", "--json"], nvml=NO_DRIVER)
        self.assertEqual(p.returncode, 3, p.stderr)
        header, samples = read_trace(p.stdout)
        self.assertEqual(header["format"], "gpudoctor-trace")
        self.assertEqual(header["nvml_status"], "no_driver")
        self.assertIsNone(header["driver"])
        self.assertEqual(header["gpus"], [])
        self.assertEqual(len(samples), 1)
        meminfo = dict(l.split(":", 1) for l in open("/proc/meminfo"))
        total = int(meminfo["MemTotal"].split()[0]) * 1024
        self.assertEqual(header["host"]["mem_total_bytes"], total)
        self.assertGreater(samples[0]["host"]["mem_available_bytes"], 0)
        self.assertIsNotNone(samples[0]["host"]["cpu_util_pct"])

    def test_ps_without_driver_lists_nothing_and_says_why(self):
        p = run(["ps"], nvml=NO_DRIVER)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("no NVIDIA driver found", p.stdout)
        self.assertIn("(no GPU processes)", p.stdout)


class BadInput(unittest.TestCase):
    def test_bad_interval_is_one_line_error_naming_the_value(self):
        p = run(["--interval", "fast", "status"], nvml=NO_DRIVER)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("fast", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)

    def test_unknown_subcommand_and_missing_output_fail(self):
        self.assertNotEqual(run(["frobnicate"], nvml=NO_DRIVER).returncode, 0)
        self.assertNotEqual(run(["record"], nvml=NO_DRIVER).returncode, 0)

    def test_every_subcommand_has_help(self):
        for sub in ["status", "ps", "record", "diagnose"]:
            p = run([sub, "--help"], nvml=NO_DRIVER)
            self.assertEqual(p.returncode, 0, sub)
            self.assertIn("--json" if sub != "record" else "--output", p.stdout)


class FakeFourGpus(E2E):
    def test_status_json_shows_the_scenario_values_exactly(self):
        want_header, want_samples = load_scenario(scenario_4gpu())
        p = run(["status", "--json"], scenario=scenario_4gpu())
        self.assertEqual(p.returncode, 0, p.stderr)
        header, samples = read_trace(p.stdout)
        self.assertEqual(header["nvml_status"], "ok")
        self.assertEqual(header["driver"], want_header["driver"])
        self.assertEqual(len(header["gpus"]), 4)
        for got, want in zip(header["gpus"], want_header["gpus"]):
            for k, v in known(want).items():
                self.assertEqual(got.get(k), v, f"gpu {want['index']} header field {k}")
        for got, want in zip(samples[0]["gpus"], want_samples[0]["gpus"]):
            for k, v in known(want).items():
                self.assertEqual(got.get(k), v, f"gpu {want['index']} field {k}")
            for k, v in want.items():
                if v is None:  # NOT_SUPPORTED in the fake -> unknown, not 0
                    self.assertIsNone(got.get(k), f"gpu {want['index']} field {k}")

    def test_status_text_names_every_gpu(self):
        want_header, _ = load_scenario(scenario_4gpu())
        p = run(["status"], scenario=scenario_4gpu())
        self.assertEqual(p.returncode, 0, p.stderr)
        for g in want_header["gpus"]:
            self.assertIn(f"GPU {g['index']}  {g['name']}  {g['pci_bus_id']}", p.stdout)
        self.assertIn(f"Driver {want_header['driver']['driver_version']}", p.stdout)

    def test_hung_gpu_is_reported_stale_and_status_still_answers(self):
        header, samples = load_scenario(scenario_4gpu())
        header["faults"] = [{"function": "nvmlDeviceGetUtilizationRates", "gpu": 2, "hang_s": 60}]
        path = write_scenario(header, samples, self.tmp.name)
        start = time.monotonic()
        p = run(["--deadline", "300ms", "status", "--json"], scenario=path, timeout=20)
        self.assertLess(time.monotonic() - start, 15, "status waited for the hung GPU")
        self.assertEqual(p.returncode, 0, p.stderr)
        _, got = read_trace(p.stdout)
        by_index = {g["index"]: g for g in got[0]["gpus"]}
        self.assertTrue(by_index[2].get("stale"), by_index[2])
        self.assertEqual(by_index[0]["util_pct"], samples[0]["gpus"][0]["util_pct"])
        kinds = [e["kind"] for e in got[0]["events"]]
        self.assertIn("nvml_error", kinds)


class RealProcesses(E2E):
    """Children that play GPU jobs: their real PIDs go into the scenario."""

    def test_ps_folds_workers_and_flags_zombie_and_vanished_owner(self):
        trainer = spawn_python(TRAINER.format(workers=2))
        zparent = spawn_python(ZOMBIE_PARENT)
        self.children += [trainer, zparent]
        pids = [int(x) for x in trainer.stdout.readline().split(",")]
        zp, zombie = [int(x) for x in zparent.stdout.readline().split(",")]
        gone = unused_pid()

        header, samples = load_scenario(scenario_4gpu())
        samples = samples[:1]
        samples[0]["gpus"][0]["processes"] = [
            {"pid": pids[0], "used_bytes": 30 << 30, "type": "compute"},
            {"pid": zombie, "used_bytes": 2 << 30, "type": "compute"}]
        samples[0]["gpus"][1]["processes"] = [{"pid": gone, "used_bytes": 1 << 30, "type": "compute"}]
        path = write_scenario(header, samples, self.tmp.name)

        p = run(["ps", "--json"], scenario=path)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = {(r["gpu"], r["pid"]): r for r in json.loads(p.stdout)["processes"]}
        t = rows[(0, pids[0])]
        self.assertEqual(t["used_bytes"], 30 << 30)
        self.assertEqual(sorted(c["pid"] for c in t["children"]), sorted(pids[1:]))
        for c in t["children"]:
            self.assertEqual(c["ppid"], pids[0])
            # A spinning worker; the bar is low because a loaded 2-core CI
            # machine gives it only a share of a core (an idle one reads 0).
            self.assertGreater(c["cpu_pct"], 5.0, "a busy worker shows its CPU")
        self.assertEqual(rows[(0, zombie)]["state"], "Z")
        self.assertEqual(rows[(0, zombie)]["ppid"], zp)
        self.assertEqual(rows[(1, gone)]["state"], "missing")

        text = run(["ps"], scenario=path).stdout
        self.assertIn(f"ZOMBIE: memory is freed when parent {zp} reaps it", text)
        self.assertIn("NOT IN /proc", text)
        self.assertIn(f"`- {pids[1]}", text)


if __name__ == "__main__":
    unittest.main()
