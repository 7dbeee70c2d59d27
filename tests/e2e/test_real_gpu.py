"""What gpudoctor recorded on real GPUs (tests/data/real_gpu, see its
README): an H100 80GB HBM3 and an H200 with driver 580.159.04 and CUDA 13.0.

- diagnose --from each real trace: the input-starved PyTorch job is named
  input-bound with its two loader workers; the healthy job, the burn and the
  matmul run raise nothing.
- The fake NVML replays a real trace: status --json gives back the real
  GPU's facts and readings, and serve's /metrics has the same metric
  families, with the same labels, as the page serve gave on the real H100.
- serve's page for the replayed H100 passes promtool.
"""
import json
import os
import re
import shutil
import subprocess
import unittest

from gd_e2e import (DATA_DIR, E2E, PROMTOOL_CAMEL, kill_tree, promtool_unexpected,
                    read_trace, run, strip_nulls)
from test_serve import Serve

REAL = os.path.join(DATA_DIR, "real_gpu")
PROMTOOL = shutil.which("promtool")


def real(name):
    return os.path.join(REAL, name)


def load(name):
    with open(real(name)) as f:
        return read_trace(f.read())


def families(page):
    """Metric family -> sorted label names of its first series."""
    out = {}
    for line in page.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)(\{([^}]*)\})?\s", line)
        if m and m.group(1) not in out:
            labels = re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="', m.group(3) or "")
            out[m.group(1)] = sorted(labels)
    return out


class RealDiagnosis(E2E):
    def diagnose(self, name):
        p = run(["diagnose", "--from", real(name), "--json"], timeout=60)
        return p.returncode, json.loads(p.stdout)

    def test_starved_pytorch_job_is_input_bound(self):
        rc, out = self.diagnose("h100-input-bound.jsonl")
        self.assertEqual(rc, 1, out)
        self.assertEqual([f["id"] for f in out["findings"]], ["input-bound"])
        f = out["findings"][0]
        self.assertEqual(f["severity"], "warning")
        self.assertEqual(f["gpus"], [0])
        text = json.dumps(f)
        self.assertIn("2 workers", text)
        self.assertIn("num_workers (now 2)", text)

    def test_orphaned_memory_names_the_forked_child_not_an_nvml_client(self):
        # H200, driver 580: a PyTorch process holding 7.2 GiB forked pid 511
        # and exited; NVML kept listing its pid 489. `gpudoctor serve` (461)
        # held the same device files (nvidia-uvm too), but maps only libcuda.
        rc, out = self.diagnose("h200-orphaned-child.jsonl")
        self.assertEqual(rc, 2, out)
        f = [x for x in out["findings"] if x["id"] == "orphaned-memory"]
        self.assertEqual(len(f), 1, out)
        self.assertIn(511, f[0]["pids"])
        self.assertNotIn(461, f[0]["pids"])
        self.assertIn("`gpudoctor kill 511`", f[0]["action"])
        self.assertNotIn("--gpu-reset", f[0]["action"])
        self.assertIn("libcudart.so.13", f[0]["evidence"])

    def test_healthy_runs_raise_nothing(self):
        for name in ("h100-pytorch-job.jsonl", "h100-burn.jsonl", "h200-matmul.jsonl"):
            with self.subTest(trace=name):
                rc, out = self.diagnose(name)
                self.assertEqual(rc, 0, out)
                self.assertEqual(out["findings"], [])


class FakeReplaysReal(E2E):
    def test_status_gives_back_the_real_gpu(self):
        header, samples = load("h100-pytorch-job.jsonl")
        p = run(["--slow-reads", "0s", "status", "--json"],
                scenario=real("h100-pytorch-job.jsonl"), check=True)
        got_header, got = read_trace(p.stdout)
        self.assertEqual(strip_nulls(got_header["gpus"]), strip_nulls(header["gpus"]))
        self.assertEqual(got_header["driver"]["nvml_version"], "13.580.159.04")
        g, want = got[0]["gpus"][0], samples[0]["gpus"][0]
        for k in ("util_pct", "mem_used_bytes", "temp_c", "power_w", "sm_clock_mhz",
                  "pcie_gen", "pcie_width", "row_remap_histogram", "bar1_used_bytes"):
            self.assertEqual(g.get(k), want.get(k), k)
        self.assertEqual([p["pid"] for p in g["processes"]],
                         [p["pid"] for p in want["processes"]])

    def test_metrics_have_the_families_of_the_real_page(self):
        with open(real("h100-metrics.txt")) as f:
            want = families(f.read())
        serve = Serve(real("h100-pytorch-job.jsonl"), ["--no-db"])
        try:
            # Host CPU rates need a second sample.
            serve.wait_metrics(lambda m: any(k.startswith("DCGM_FI_DEV_GPU_UTIL{") for k in m)
                               and "gpudoctor_host_cpu_utilization_percent" in m)
            got = families(serve.get("/metrics")[2])
        finally:
            kill_tree(serve.proc)
        dcgm = {k: v for k, v in want.items() if k.startswith("DCGM_FI_")}
        self.assertGreater(len(dcgm), 20)
        for name, labels in dcgm.items():
            self.assertIn(name, got)
            self.assertEqual(got[name], labels, name)
        # The recorded job's pid lives on the GPU machine, not here: its CPU
        # and RSS come from /proc, so only those two families are missing.
        from_proc = {"gpudoctor_process_cpu_percent",
                     "gpudoctor_process_resident_memory_bytes"}
        ours = {k for k in want if k.startswith("gpudoctor_")} - from_proc
        self.assertEqual(sorted(ours - set(got)), [])


class RealMetricsPage(E2E):
    def test_page_of_the_replayed_h100_passes_promtool(self):
        """serve's page for the real H100 (replayed by the fake) is valid
        exposition text; only dcgm-exporter's own names draw promtool lints."""
        if not PROMTOOL:
            self.fail("promtool not installed (Debian package 'prometheus')")
        serve = Serve(real("h100-pytorch-job.jsonl"), ["--no-db"])
        try:
            serve.wait_metrics(lambda m: "gpudoctor_host_cpu_utilization_percent" in m)
            page = serve.get("/metrics")[2]
        finally:
            kill_tree(serve.proc)
        self.assertIn('modelName="NVIDIA H100 80GB HBM3"', page)
        p = subprocess.run([PROMTOOL, "check", "metrics"], input=page.encode(),
                           capture_output=True, timeout=60)
        output = (p.stdout + p.stderr).decode()
        self.assertEqual(promtool_unexpected(output), [])
        self.assertIn(PROMTOOL_CAMEL, output)  # promtool did read the page


if __name__ == "__main__":
    unittest.main()
