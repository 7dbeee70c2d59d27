"""The NVML fields of trace-format.md "Additions to version 1", end to end:
a scenario with every one of them -> `gpudoctor record` against the fake ->
the recorded trace holds each with the scenario's value -> `diagnose --from`
reads it. And a read that fails shows in `status --json` as read_errors."""
import os
import shutil
import unittest

from gd_e2e import (E2E, FAKE_NVML, NO_DRIVER, load_scenario, read_trace, run,
                    scenario_4gpu, strip_nulls, write_scenario)

NEW_HEADER_FIELDS = {
    "minor_number": lambda i: 7 - i,  # not the index, as on real hosts
    "temp_max_operating_c": lambda i: 87,
    "temp_mem_max_c": lambda i: 95,
    "bar1_total_bytes": lambda i: 137438953472,
    "vbios_version": lambda i: f"92.00.45.00.0{i}",
}


def new_sample_fields(i, step):
    """Every new sampled field of GPU i; the recovery action changes (as
    Xid 154 announces) from the third sample on."""
    return {
        "mem_reserved_bytes": 659554304,
        "bar1_used_bytes": 4194304 * (i + 1),
        "ecc_sbe_aggregate_total": 120 + step,
        "ecc_dbe_aggregate_total": 3,
        "ecc_sram_correctable_aggregate_total": 20,
        "ecc_sram_uncorrectable_aggregate_total": 2 + i,
        "ecc_dram_correctable_aggregate_total": 100 + step,
        "ecc_dram_uncorrectable_aggregate_total": 1,
        "ecc_sram_correctable_volatile_total": 4,
        "ecc_sram_uncorrectable_volatile_total": 1,
        "ecc_dram_correctable_volatile_total": 7 + step,
        "ecc_dram_uncorrectable_volatile_total": 0,
        "ecc_sram_threshold_exceeded": i == 1,
        "remapped_rows_pending": True,
        "remapped_rows_failure": False,
        "remapped_rows_correctable_total": 6,
        "remapped_rows_uncorrectable_total": 2,
        "row_remap_histogram": {"max": 630, "high": 8, "partial": 1, "low": 1, "none": 0},
        "recovery_action": "none" if step < 2 else "drain_and_reset",
        "temp_limit_margin_c": 18 - step,
    }


class NewFields(E2E):
    def scenario(self):
        header, samples = load_scenario(scenario_4gpu())
        for g in header["gpus"]:
            for k, f in NEW_HEADER_FIELDS.items():
                g[k] = f(g["index"])
        for step, s in enumerate(samples):
            for g in s["gpus"]:
                if not g.get("lost"):
                    g.update(new_sample_fields(g["index"], step))
        return header, samples

    def test_every_new_field_round_trips_through_record_and_diagnose(self):
        want_header, want = self.scenario()
        path = write_scenario(want_header, want, self.tmp.name)
        out = os.path.join(self.tmp.name, "rec.jsonl")
        p = run(["--interval", "1s", "--slow-reads", "0s", "record", "-o", out, "--count", "4"],
                scenario=path, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        header, got = load_scenario(out)
        for g in header["gpus"]:
            for k, f in NEW_HEADER_FIELDS.items():
                self.assertEqual(g.get(k), f(g["index"]), f"header gpu {g['index']} {k}")
        wanted = [strip_nulls(s["gpus"]) for s in want]
        seen_actions = set()
        for s in got:
            gpus = strip_nulls(s["gpus"])
            self.assertIn(gpus, wanted, "recorded GPU part is not one of the scenario's samples")
            for g in gpus:
                for k in new_sample_fields(0, 0):
                    self.assertIn(k, g, f"gpu {g['index']} lacks {k}")
                self.assertNotIn("read_errors", g)
                seen_actions.add(g["recovery_action"])
        self.assertIn("none", seen_actions)
        self.assertIn("drain_and_reset", seen_actions, "the recovery action change was not replayed")

        p = run(["diagnose", "--from", out], nvml=NO_DRIVER, timeout=60)
        self.assertNotEqual(p.returncode, 3, p.stderr)
        self.assertIn(p.returncode, (0, 1, 2), p.stderr)

    def test_status_json_names_a_failed_power_read(self):
        header, samples = self.scenario()
        header["faults"] = [
            {"function": "nvmlDeviceGetPowerUsage", "gpu": 1, "return": "UNKNOWN"},
            {"function": "nvmlDeviceGetFanSpeed", "gpu": 1, "return": "NOT_SUPPORTED"}]
        path = write_scenario(header, samples, self.tmp.name)
        p = run(["status", "--json"], scenario=path)
        self.assertEqual(p.returncode, 0, p.stderr)
        _, got = read_trace(p.stdout)
        gpus = {g["index"]: g for g in got[0]["gpus"]}
        self.assertEqual(gpus[1].get("read_errors"), ["power_w"])
        self.assertIsNone(gpus[1].get("power_w"))
        self.assertIsNone(gpus[1].get("fan_pct"))  # N/A, not ERR!
        self.assertIsNone(gpus[0].get("read_errors"))
        self.assertIsNotNone(gpus[0].get("power_w"))

    def test_library_version_is_shown_even_when_nvml_cannot_start(self):
        # As a driver installs it: libnvidia-ml.so.1 -> libnvidia-ml.so.<version>.
        real = os.path.join(self.tmp.name, "libnvidia-ml.so.535.104.05")
        shutil.copyfile(FAKE_NVML, real)
        lib = os.path.join(self.tmp.name, "libnvidia-ml.so.1")
        os.symlink(os.path.basename(real), lib)
        header, samples = load_scenario(scenario_4gpu())
        header["faults"] = [{"init_return": "LIB_RM_VERSION_MISMATCH"}]
        path = write_scenario(header, samples, self.tmp.name)
        p = run(["status", "--json"], scenario=path, nvml=lib)
        got, _ = read_trace(p.stdout)
        self.assertEqual(got["nvml_status"], "driver_library_mismatch", p.stderr)
        self.assertEqual((got.get("driver") or {}).get("library_version"), "535.104.05")


if __name__ == "__main__":
    unittest.main()
