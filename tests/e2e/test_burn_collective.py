"""burn's all-reduce (--collective) end to end: the real binary drives the fake
libcuda.so.1 and the fake libnccl.so.2 (tests/fake_nccl) over 8 fake A100s with
NVLink; the verdict against the published figure, a slow link, wrong sums, one
GPU (loopback), an unknown link, and a node without NCCL."""
import json
import os
import subprocess
import unittest

from test_burn import BurnE2E, a100_node, burn_cmd, burn_env, gpu_reading, T0
from gd_e2e import write_scenario

FAKE_NCCL = os.environ.get("FAKE_NCCL_LIB", "")


class Collective(BurnE2E):
    def setUp(self):
        super().setUp()
        if not FAKE_NCCL or not os.path.exists(FAKE_NCCL):
            self.fail(f"fake libnccl.so.2 not found (FAKE_NCCL_LIB={FAKE_NCCL!r})")

    def nvlink_node(self, nvlinks=12):
        header = a100_node(8)
        for g in header["gpus"]:
            if nvlinks is not None:
                g["nvlink_count"] = nvlinks
        samples = [{"t": T0 + t, "gpus": [gpu_reading(i, t) for i in range(8)],
                    "host": {"cpu_util_pct": 5.0}, "processes": [], "events": []}
                   for t in range(40)]
        return write_scenario(header, samples, self.tmp.name)

    def burn(self, scenario, *flags, nccl_faults=None, json_out=True, **env):
        extra = {"FAKE_NCCL_BUS_GBPS": "240"}
        extra.update(env)
        environ = burn_env(scenario, **extra)
        environ.pop("FAKE_NCCL_FAULTS", None)
        if nccl_faults:
            environ["FAKE_NCCL_FAULTS"] = json.dumps(nccl_faults)
        cmd = burn_cmd() + ["--nccl-lib", FAKE_NCCL, "--duration", "2s"] + list(flags)
        if json_out:
            cmd.append("--json")
        p = subprocess.run(cmd, env=environ, capture_output=True, text=True, timeout=120)
        doc = json.loads(p.stdout) if json_out and p.stdout.strip() else None
        return p, doc

    def test_healthy_nvlink_node_passes_at_the_published_figure(self):
        p, doc = self.burn(self.nvlink_node(), "--tests", "collective")
        self.assertEqual(p.returncode, 0, p.stderr)
        c = doc["collective"]
        self.assertEqual(c["verdict"], "pass", c["reasons"])
        self.assertEqual(doc["tests"], ["collective"])
        self.assertEqual(c["gpus"], list(range(8)))
        self.assertEqual(c["link"], "NVLink")
        # nccl-tests' definitions: busbw = algbw x 2(n-1)/n, the fake's 240 GB/s.
        self.assertAlmostEqual(c["busbw_bytes_per_s"] / 1e9, 240, delta=240 * 0.05)
        self.assertAlmostEqual(c["busbw_bytes_per_s"] / c["algbw_bytes_per_s"], 1.75,
                               places=3)
        self.assertEqual(c["expected_busbw_bytes_per_s"], [230e9, 250e9])
        self.assertIn("A100 SXM4", c["expected_for"])
        self.assertIn("nccl-tests", c["expected_source"])
        self.assertGreaterEqual(c["iterations"], 20)
        self.assertEqual(c["wrong"], 0)
        self.assertEqual(c["checked"], 8 * c["bytes_per_gpu"] // 4)
        self.assertTrue(c["nccl"].startswith(FAKE_NCCL), c["nccl"])
        self.assertEqual(doc["exit_code"], 0)

    def test_text_report_names_the_gpus_figures_and_verdict(self):
        p, _ = self.burn(self.nvlink_node(), "--tests", "collective", json_out=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"All-reduce across GPUs 0,1,2,3,4,5,6,7 \(.*NVLink\)  PASS")
        self.assertRegex(p.stdout, r"bus bandwidth 2[0-9][0-9]\.\d GB/s \(algorithm 1[0-9][0-9]\.\d GB/s\)")
        self.assertIn("; all-reduce pass", p.stdout)
        self.assertIn("all-reduce", p.stderr.splitlines()[0])  # the start line
        self.assertIn("NCCL ", p.stderr.splitlines()[0])

    def test_a_slow_link_warns_with_the_fix_and_the_runs_nccl_settings(self):
        p, doc = self.burn(self.nvlink_node(), "--tests", "collective",
                           nccl_faults=[{"gpu": 2, "speed": 0.5}], NCCL_P2P_DISABLE="1")
        c = doc["collective"]
        self.assertEqual(c["verdict"], "warn", c["reasons"])
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertAlmostEqual(c["busbw_bytes_per_s"] / 1e9, 120, delta=120 * 0.05)
        why = " ".join(c["reasons"])
        self.assertRegex(why, r"is 5[0-9]% of the 230\.0 GB/s-250\.0 GB/s expected")
        self.assertIn("nvidia-smi nvlink -s", why)
        self.assertIn("this run had NCCL_P2P_DISABLE=1", why)
        self.assertEqual(c["nccl_env"], "NCCL_P2P_DISABLE=1")

    def test_wrong_sums_fail_the_run_and_the_gpu_that_got_them(self):
        p, doc = self.burn(self.nvlink_node(), "--tests", "collective",
                           nccl_faults=[{"gpu": 1, "wrong_results": 3}])
        c = doc["collective"]
        self.assertEqual(c["verdict"], "fail")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(c["wrong"], 3)
        self.assertEqual(c["wrong_by_gpu"], [{"gpu": 1, "count": 3}])
        by_gpu = {g["gpu"]: g for g in doc["gpus"]}
        self.assertEqual(by_gpu[1]["verdict"], "fail")
        self.assertIn("3 wrong results in its all-reduce receive buffer", by_gpu[1]["reasons"])
        self.assertEqual(by_gpu[0]["verdict"], "pass")

    def test_one_gpu_is_a_loopback_figure_not_judged(self):
        p, doc = self.burn(self.nvlink_node(), "--tests", "collective", "--gpu", "3")
        c = doc["collective"]
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(c["verdict"], "not judged")
        self.assertTrue(c["loopback"])
        self.assertIsNone(c["busbw_bytes_per_s"])
        self.assertGreater(c["algbw_bytes_per_s"], 0)
        self.assertIn("loopback", c["reasons"][0])

    def test_unknown_link_is_measured_but_not_judged(self):
        p, doc = self.burn(self.nvlink_node(nvlinks=None), "--tests", "collective")
        c = doc["collective"]
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(c["verdict"], "not judged")
        self.assertIsNone(c["link"])
        self.assertIn("NVLink is unknown", c["reasons"][0])
        self.assertGreater(c["busbw_bytes_per_s"], 0)

    def test_after_the_per_gpu_tests(self):
        p, doc = self.burn(self.nvlink_node(), "--tests", "pcie", "--collective")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(doc["tests"], ["pcie", "collective"])
        self.assertEqual(doc["collective"]["verdict"], "pass")
        for g in doc["gpus"]:
            self.assertGreater(g["h2d_bytes_per_s"], 0)

    def test_without_nccl_it_says_so_and_exits_3(self):
        cmd = burn_cmd() + ["--nccl-lib", os.path.join(self.tmp.name, "libnccl.so.2"),
                            "--tests", "collective", "--duration", "2s"]
        p = subprocess.run(cmd, env=burn_env(self.nvlink_node()), capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(p.stdout, "")
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("gpudoctor: burn: --collective needs NCCL: no NCCL (cannot load", lines[0])
        self.assertIn("--nccl-lib", lines[0])


if __name__ == "__main__":
    unittest.main()
