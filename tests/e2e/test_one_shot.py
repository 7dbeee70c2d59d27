"""The one-shot commands (status, ps) on the fake: CPU rates measured over a
real window, --sys-root reaching the GPU's NUMA node lookup, and the slow
NVML calls waited for side by side rather than one after another."""
import json
import os
import re
import time
import unittest

from gd_e2e import E2E, load_scenario, read_trace, run, scenario_4gpu, spawn_python, write_scenario

# A GPU process that burns CPU in its own main thread.
SPINNER = r"""
import os, time
print(os.getpid(), flush=True)
end = time.time() + 120
while time.time() < end:
    pass
"""


class CpuRates(E2E):
    """One sample has no rate: the command must measure one, not print 0."""

    def setUp(self):
        super().setUp()
        spinner = spawn_python(SPINNER)
        self.children.append(spinner)
        self.pid = int(spinner.stdout.readline())
        header, samples = load_scenario(scenario_4gpu())
        samples = samples[:1]
        samples[0]["gpus"][0]["processes"] = [
            {"pid": self.pid, "used_bytes": 8 << 30, "type": "compute"}]
        self.scenario = write_scenario(header, samples, self.tmp.name)

    def test_status_json_has_the_cpu_of_a_busy_gpu_process_and_the_host(self):
        p = run(["status", "--json"], scenario=self.scenario)
        self.assertEqual(p.returncode, 0, p.stderr)
        _, samples = read_trace(p.stdout)
        procs = {q["pid"]: q for q in samples[0]["processes"]}
        self.assertIn(self.pid, procs)
        # Measured, not left out: one reading has no rate. (Its value is not
        # checked: over status' 20 ms a loaded 2-core machine may not run it.)
        self.assertIsNotNone(procs[self.pid].get("cpu_pct"), "one reading is not a rate")
        self.assertGreaterEqual(procs[self.pid]["cpu_pct"], 0.0)
        self.assertGreater(samples[0]["host"]["cpu_util_pct"], 0.0)

    def test_status_text_shows_busy_host_cpu(self):
        p = run(["status"], scenario=self.scenario)
        self.assertEqual(p.returncode, 0, p.stderr)
        m = re.search(r"CPU (\S+)% \(iowait", p.stdout)
        self.assertIsNotNone(m, p.stdout)
        self.assertGreater(float(m.group(1)), 0.0, p.stdout)

    def test_ps_shows_the_cpu_of_a_busy_gpu_process(self):
        p = run(["ps", "--json"], scenario=self.scenario)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = [r for r in json.loads(p.stdout)["processes"] if r["pid"] == self.pid]
        self.assertEqual(len(rows), 1, p.stdout)
        self.assertGreater(rows[0]["cpu_pct"], 0.0)


class Concurrency(E2E):
    """Slow driver calls (latency faults far above anything else here) run
    beside each other: nvmlInit while the host is read, the PCIe counters
    beside the sample's other reads, the processes' first reading while the
    GPUs are read. In sequence this status would take 0.5 (init) + 0.5
    (energy) + 0.5 (PCIe) s."""

    def setUp(self):
        super().setUp()
        spinner = spawn_python(SPINNER)
        self.children.append(spinner)
        self.pid = int(spinner.stdout.readline())
        self.header, samples = load_scenario(scenario_4gpu())
        self.samples = samples[:1]
        self.samples[0]["gpus"][0]["processes"] = [
            {"pid": self.pid, "used_bytes": 8 << 30, "type": "compute"}]

    def status(self, faults, deadline):
        self.header["faults"] = faults
        scenario = write_scenario(self.header, self.samples, self.tmp.name)
        start = time.monotonic()
        p = run(["--deadline", deadline, "status", "--json"], scenario=scenario)
        wall = time.monotonic() - start
        self.assertEqual(p.returncode, 0, p.stderr)
        _, got = read_trace(p.stdout)
        return got[0], wall

    def test_slow_calls_overlap_and_every_value_is_still_read(self):
        sample, wall = self.status([
            {"function": "nvmlInit_v2", "latency_ms": 500},
            {"function": "nvmlDeviceGetTotalEnergyConsumption", "latency_ms": 500},
            {"function": "nvmlDeviceGetPcieThroughput", "latency_ms": 500}], "5s")
        self.assertGreaterEqual(wall, 1.0)
        # Sanitizers slow every step; one after another still takes longer.
        limit = 1.35 * (1.5 if os.environ.get("GD_SANITIZED") else 1)
        self.assertLess(wall, limit, "the slow calls ran one after another")
        want = self.samples[0]["gpus"][0]
        got = {g["index"]: g for g in sample["gpus"]}[0]
        for field in ("pcie_tx_bytes_per_s", "pcie_rx_bytes_per_s", "energy_mj_total"):
            self.assertEqual(got.get(field), want[field], field)
        procs = {q["pid"]: q for q in sample["processes"]}
        self.assertIsNotNone(procs[self.pid].get("cpu_pct"), "one reading is not a rate")
        self.assertIsNotNone(sample["host"].get("cpu_util_pct"))

    def test_a_hung_pcie_counter_is_bounded_by_the_deadline(self):
        sample, wall = self.status([
            {"function": "nvmlDeviceGetPcieThroughput", "gpu": 1, "hang_s": 60}], "300ms")
        self.assertLess(wall, 10, "status waited for the hung GPU")
        got = {g["index"]: g for g in sample["gpus"]}
        self.assertTrue(got[1].get("stale"), got[1])
        self.assertFalse(got[0].get("stale"), got[0])
        self.assertIn("nvml_error", [e["kind"] for e in sample["events"]])


class SysRoot(E2E):
    def test_numa_node_comes_from_the_given_sys_root(self):
        header, samples = load_scenario(scenario_4gpu())
        # NVML does not know GPU 0's node (NOT_SUPPORTED on PCIe boards):
        # it is read from sysfs, here a fake tree.
        header["gpus"][0]["numa_node"] = None
        scenario = write_scenario(header, samples[:1], self.tmp.name)
        bus_id = header["gpus"][0]["pci_bus_id"]  # 00000000:07:00.0
        domain, rest = bus_id.split(":", 1)
        name = "%04x:%s" % (int(domain, 16), rest.lower())
        sys_root = os.path.join(self.tmp.name, "sys")
        device = os.path.join(sys_root, "bus", "pci", "devices", name)
        os.makedirs(device)
        with open(os.path.join(device, "numa_node"), "w") as f:
            f.write("3\n")

        p = run(["--sys-root", sys_root, "status", "--json"], scenario=scenario)
        self.assertEqual(p.returncode, 0, p.stderr)
        got, _ = read_trace(p.stdout)
        self.assertEqual(got["gpus"][0]["numa_node"], 3)
        text = run(["--sys-root", sys_root, "status"], scenario=scenario).stdout
        self.assertIn("NUMA 3", text.split("GPU 1")[0])


if __name__ == "__main__":
    unittest.main()
