"""Known faults diagnosed from a fleet's Prometheus, end to end: an hour of
five nodes' dcgm-exporter and node_exporter series in their own exposition,
backfilled with promtool into a real Prometheus, then `gpudoctor diagnose
--prometheus --json` over the fleet (read by remote read, as by default):
  node-xid    GPU 0's DCGM_FI_DEV_XID_ERRORS turns to 79 half way -> xid-error,
              and gpu-lost (Xid 79: the GPU fell off the bus)
  node-ecc    GPU 1's volatile double-bit ECC count grows 0 -> 3 -> ecc-uncorrectable
  node-pcie   GPU 0 busy at PCIe Gen3 x8 while serve says its link can do
              Gen5 x16 (gpudoctor_pcie_link_max_*) -> pcie-link-degraded
  node-swap   the host pages 4,000 pages/s in and out with 60 GiB of swap
              used -> host-swapping
  node-ok     busy, cool, healthy -> no warning or critical
  node-loader both GPUs starved every other step while gpudoctor serve's
              series show their job's four data-loader workers each at ~97%
              of a CPU -> input-bound, one finding for the job's two ranks
  node-loader-dcgm  the same GPUs with dcgm-exporter only -> nothing, and
              input-bound listed as not judged
Every node but node-loader must list input-bound as not judged: no exporter
there gives per-process CPU. On node-loader the rules that need what serve's
series do not carry (mapped libraries, /dev/shm's size) say so.
`report --prometheus` over the same fleet gives node-loader's GPU-hours and
energy to alice, whose job held them, and leaves every other node's GPUs
unattributed (no process lists there).
promtool or prometheus missing fails the test: it is never skipped.
"""
import json
import os
import tempfile
import time
import unittest

from gd_e2e import kill_tree
from test_prometheus_source import (CPU_MODES, CPUS, DCGM, HOUR, MiB, STEP, gd,
                                    gpu_values, start_prometheus)

GiB = 1024 * MiB
NODES = ["node-xid", "node-ecc", "node-pcie", "node-swap", "node-ok", "node-loader",
         "node-loader-dcgm"]
LOADERS = ("node-loader", "node-loader-dcgm")
# node-loader's job: torchrun (pid 1999) with a rank per GPU, each with four
# data-loader workers.
LAUNCHER = 1999
RANKS = {0: 2000, 1: 2100}
WORKERS = 4


def gpu_series(node, gpu, i, n):
    """One GPU's DCGM values at step i of n, with the node's fault."""
    v = gpu_values(False, i)
    v["DCGM_FI_DEV_PCIE_LINK_GEN"] = 5
    v["DCGM_FI_DEV_PCIE_LINK_WIDTH"] = 16
    if node == "node-xid" and gpu == 0 and i >= n // 2:
        v["DCGM_FI_DEV_XID_ERRORS"] = 79
    if node == "node-ecc" and gpu == 1:
        v["DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"] = min(3, max(0, (i - n // 3) // 20))
    if node == "node-pcie" and gpu == 0:
        v["DCGM_FI_DEV_PCIE_LINK_GEN"] = 3
        v["DCGM_FI_DEV_PCIE_LINK_WIDTH"] = 8
    if node in LOADERS:
        v["DCGM_FI_DEV_GPU_UTIL"] = 15 if i % 2 else 96
    return v


def serve_job_rows(n):
    """gpudoctor serve's series of node-loader's job, named and labelled as
    src/exporter writes them (tests/exporter checks the same shapes)."""
    base = [("Hostname", "node-loader"), ("instance", "node-loader:9856"),
            ("job", "gpudoctor")]
    lists = [(base + [("gpu", gpu)], "gpudoctor_gpu_processes", [1] * n) for gpu in RANKS]
    memory = [(base + [("gpu", gpu), ("pid", pid), ("user", "alice"), ("comm", "python")],
               "gpudoctor_process_gpu_memory_bytes", [60 * GiB] * n)
              for gpu, pid in RANKS.items()]
    tree = []
    for pid in RANKS.values():
        tree.append((base + [("pid", pid), ("ppid", LAUNCHER), ("user", "alice"),
                             ("comm", "python")],
                     "gpudoctor_process_tree_cpu_percent", [55.0] * n))
        for w in range(1, WORKERS + 1):
            tree.append((base + [("pid", pid + w), ("ppid", pid), ("user", "alice"),
                                 ("comm", "pt_data_worker")],
                         "gpudoctor_process_tree_cpu_percent",
                         [97.0 + (i % 3) * 0.5 for i in range(n)]))
    return lists, memory, tree


def exposition(times):
    out = []
    n = len(times)

    def family(name, typ, rows):
        out.append(f"# TYPE {name} {typ}")
        for labels, series_name, values in rows:
            body = ",".join(f'{k}="{v}"' for k, v in labels)
            for t, v in zip(times, values):
                out.append(f"{series_name}{{{body}}} {v} {t}")

    families = [(name, typ) for name, typ, _ in DCGM] + [
        ("DCGM_FI_DEV_PCIE_LINK_GEN", "gauge"), ("DCGM_FI_DEV_PCIE_LINK_WIDTH", "gauge")]
    for name, typ in families:
        rows = []
        for k, node in enumerate(NODES):
            for gpu in (0, 1):
                labels = [("gpu", gpu), ("UUID", f"GPU-{node}-{gpu}"),
                          ("device", f"nvidia{gpu}"), ("modelName", "NVIDIA H100 80GB HBM3"),
                          ("Hostname", node), ("instance", f"10.2.0.{k + 1}:9400"),
                          ("job", "dcgm-exporter")]
                rows.append((labels, name,
                             [gpu_series(node, gpu, i, n)[name] for i in range(n)]))
        family(name, typ, rows)
    # gpudoctor serve on node-pcie: what the link can do.
    for name, value in (("gpudoctor_pcie_link_max_generation", 5),
                        ("gpudoctor_pcie_link_max_width", 16)):
        family(name, "gauge", [([("gpu", gpu), ("Hostname", "node-pcie"),
                                 ("instance", "node-pcie:9856"), ("job", "gpudoctor")],
                                name, [value] * n) for gpu in (0, 1)])
    lists, memory, tree = serve_job_rows(n)
    family("gpudoctor_gpu_processes", "gauge", lists)
    family("gpudoctor_process_gpu_memory_bytes", "gauge", memory)
    family("gpudoctor_process_tree_cpu_percent", "gauge", tree)

    def node_rows(fn):
        return [([("instance", f"{node}:9100"), ("job", "node")] + extra, series, values)
                for node in NODES for extra, series, values in fn(node)]

    family("node_cpu_seconds", "counter", node_rows(lambda node: [
        ([("cpu", c), ("mode", m)], "node_cpu_seconds_total",
         [100000 + per * i for i in range(n)])
        for c in range(CPUS) for m, per in CPU_MODES.items()]))

    def swapping(node):
        return node == "node-swap"

    for name, fn in (
            ("node_memory_MemTotal_bytes", lambda node: 512 * GiB),
            ("node_memory_MemAvailable_bytes",
             lambda node: 2 * GiB if swapping(node) else 400 * GiB),
            ("node_memory_SwapTotal_bytes", lambda node: 64 * GiB),
            ("node_memory_SwapFree_bytes",
             lambda node: 4 * GiB if swapping(node) else 64 * GiB),
            ("node_load1", lambda node: 4.5)):
        family(name, "gauge", node_rows(lambda node, f=fn, nm=name: [([], nm, [f(node)] * n)]))
    for name in ("node_vmstat_pswpin", "node_vmstat_pswpout"):
        family(name, "unknown", node_rows(lambda node, nm=name: [
            ([], nm, [(4000 * STEP * i if swapping(node) else 0) for i in range(n)])]))
    out.append("# EOF")
    return "\n".join(out) + "\n"


class PrometheusScenarios(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        end = (int(time.time()) - 120) // STEP * STEP
        cls.start, cls.end = end - HOUR, end
        text = exposition(list(range(cls.start, end + 1, STEP)))
        cls.prom, cls.url, cls.log = start_prometheus(cls.tmp.name, text)
        p = gd("diagnose", "--prometheus", cls.url, "--since", str(cls.start),
               "--until", str(cls.end), "--step", "15s", "--json")
        cls.stderr = p.stderr
        cls.code = p.returncode
        cls.out = json.loads(p.stdout) if p.stdout.strip() else {}
        p = gd("report", "--prometheus", cls.url, "--start", str(cls.start),
               "--end", str(cls.end), "--step", "15s", "--by", "user", "--json")
        cls.report_stderr = p.stderr
        cls.report_code = p.returncode
        cls.doc = json.loads(p.stdout) if p.stdout.strip() else {}

    @classmethod
    def tearDownClass(cls):
        kill_tree(cls.prom)
        cls.log.close()
        cls.tmp.cleanup()

    def report(self, node):
        self.assertEqual(self.code, 2, self.stderr)  # critical findings
        reports = {n["node"]: n["report"] for n in self.out["nodes"]}
        self.assertEqual(sorted(reports), sorted(NODES))
        return reports[node]

    def serious(self, node):
        return sorted((f["id"], f["gpus"]) for f in self.report(node)["findings"]
                      if f["severity"] in ("warning", "critical"))

    def test_each_fault_is_named_on_its_gpu(self):
        self.assertIn(("xid-error", [0]), self.serious("node-xid"))
        self.assertIn(("gpu-lost", [0]), self.serious("node-xid"))
        self.assertIn(("ecc-uncorrectable", [1]), self.serious("node-ecc"))
        self.assertIn(("pcie-link-degraded", [0]), self.serious("node-pcie"))
        self.assertIn("host-swapping", [i for i, _ in self.serious("node-swap")])

    def test_no_fault_spills_over(self):
        self.assertEqual(self.serious("node-ok"), [])
        for node, want in (("node-xid", {"xid-error", "gpu-lost"}),
                           ("node-ecc", {"ecc-uncorrectable"}),
                           ("node-pcie", {"pcie-link-degraded"}),
                           ("node-swap", {"host-swapping"}),
                           ("node-loader", {"input-bound"}),
                           ("node-loader-dcgm", set())):
            ids = {i for i, _ in self.serious(node)}
            self.assertEqual(ids, want, node)

    def test_input_bound_is_not_judged_without_process_cpu(self):
        for node in NODES:
            if node == "node-loader":
                continue
            nj = {x["id"]: x for x in self.report(node)["not_judged"]}
            self.assertIn("input-bound", nj, node)
            self.assertIn("process lists", nj["input-bound"]["reason"], node)

    def test_input_bound_is_judged_from_serves_series(self):
        found = [f for f in self.report("node-loader")["findings"] if f["id"] == "input-bound"]
        self.assertEqual(len(found), 1, found)  # one job, its two ranks together
        f = found[0]
        self.assertEqual(f["gpus"], [0, 1])
        self.assertEqual(sorted(f["pids"]), sorted(RANKS.values()))
        self.assertIn(f"their {WORKERS * len(RANKS)} workers", f["evidence"])
        nj = {x["id"]: x["reason"] for x in self.report("node-loader")["not_judged"]}
        self.assertNotIn("input-bound", nj)
        # What serve's series do not carry is said, not passed over.
        self.assertIn("/proc/PID/maps", nj.get("driver-cuda-mismatch", ""), nj)
        self.assertIn("/dev/shm", nj.get("dev-shm-small", ""), nj)

    # report --prometheus over the same fleet: where the GPU-hours and the
    # energy went, from serve's per-process series where serve runs; the
    # GPUs of the other nodes are unattributed (no process lists there),
    # never given to anyone.
    def test_every_node_is_accounted(self):
        self.assertEqual(self.report_code, 0, self.report_stderr)
        self.assertEqual(self.doc["fleet"], {"nodes": len(NODES), "checked": len(NODES),
                                             "not_checked": []})
        self.assertEqual(len(self.doc["gpus"]), 2 * len(NODES))
        self.assertEqual({g["node"] for g in self.doc["gpus"]}, set(NODES))

    def test_alices_job_holds_node_loaders_two_gpus_for_the_hour(self):
        rows = {g["key"]: g for g in self.doc["groups"]}
        self.assertEqual(sorted(rows), ["u:alice"], rows)
        alice = rows["u:alice"]
        self.assertEqual(alice["nodes"], ["node-loader"])
        self.assertAlmostEqual(alice["gpu_hours_held"], 2 * HOUR / 3600, delta=0.01)
        # DCGM's energy counter grows 600 W x 15 s a step on each GPU.
        want_kwh = 2 * 600 * HOUR / 3.6e6
        self.assertAlmostEqual(alice["energy_kwh"], want_kwh, delta=0.01 * want_kwh)
        # Busy as DCGM said: 96% and 15% in turn.
        self.assertAlmostEqual(alice["busy_gpu_hours"], 2 * (96 + 15) / 2 / 100, delta=0.02)

    def test_the_fleet_closes_and_nothing_is_invented(self):
        for g in self.doc["gpus"]:
            total = g["gpu_hours_held"] + g["gpu_hours_unheld"] + g["gpu_hours_unattributed"]
            self.assertAlmostEqual(total, g["wall_hours"], delta=0.001, msg=g)
            if g["node"] != "node-loader":
                # No process lists: nobody held it, as far as anyone can say.
                self.assertEqual(g["gpu_hours_held"], 0, g)
                self.assertAlmostEqual(g["gpu_hours_unattributed"], g["wall_hours"],
                                       delta=0.001, msg=g)
        node = self.doc["node"]
        self.assertAlmostEqual(node["gpu_hours_available"], 2 * len(NODES) * HOUR / 3600,
                               delta=0.05)

    def test_text_names_the_fleet(self):
        p = gd("report", "--prometheus", self.url, "--start", str(self.start),
               "--end", str(self.end), "--step", "15s")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"fleet: {len(NODES)} of {len(NODES)} nodes checked", p.stdout)
        job = [line for line in p.stdout.splitlines() if "(pid 1999)" in line]
        self.assertEqual(len(job), 1, p.stdout)  # the job, named by its node
        self.assertTrue(job[0].startswith("node-loader: "), job)
        self.assertIn(" node-loader ", job[0])
        self.assertIn("node-loader/1", p.stdout)

    def test_prometheus_flags_need_prometheus(self):
        p = gd("report", "--from", "/etc/hostname", "--match", '{a="b"}')
        self.assertEqual(p.returncode, 2)
        self.assertIn("--match", p.stderr)


if __name__ == "__main__":
    unittest.main()
