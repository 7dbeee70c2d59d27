"""RDMA ports end to end (issue 42): the real binary records a live run
against a copy of a sysfs tree that the test builds (two ConnectX-7 HCAs on
NUMA node 0, one InfiniBand port each) and rewrites while gpudoctor
samples: one port drops to half its rate, the other counts symbol errors.
The trace carries the ports, `diagnose --from` names each fault on the right
port, `status` shows them and /metrics exports them under node_exporter's
names. Files are replaced whole (write, then rename), as gpudoctor opens a
fixture tree's regular files for every read."""
import json
import os
import socket
import subprocess
import time
import unittest
import urllib.request

from gd_e2e import E2E, FAKE_NVML, GPUDOCTOR, load_scenario, run, scenario_4gpu

COUNTERS = ("port_rcv_data", "port_xmit_data", "symbol_error", "link_error_recovery",
            "link_downed", "port_rcv_errors", "port_xmit_discards", "port_xmit_wait",
            "local_link_integrity_errors", "excessive_buffer_overrun_errors")


class FakeSysfs:
    def __init__(self, root):
        self.root = root
        os.makedirs(os.path.join(root, "class"), exist_ok=True)

    def put(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + ".new"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)

    def hca(self, name, pci):
        dev = f"devices/pci0000:00/0000:00:01.0/{pci}"
        self.put(f"{dev}/numa_node", "0\n")
        cls = f"class/infiniband/{name}"
        os.makedirs(os.path.join(self.root, cls), exist_ok=True)
        os.symlink(f"../../../{dev}", os.path.join(self.root, cls, "device"))
        self.put(f"{cls}/hca_type", "MT4129\n")
        self.put(f"{cls}/fw_ver", "28.39.1002\n")
        port = f"{cls}/ports/1"
        self.put(f"{port}/state", "4: ACTIVE\n")
        self.put(f"{port}/phys_state", "5: LinkUp\n")
        self.put(f"{port}/rate", "400 Gb/sec (4X NDR)\n")
        self.put(f"{port}/link_layer", "InfiniBand\n")
        for c in COUNTERS:
            self.put(f"{port}/counters/{c}", "0\n")

    def port_file(self, name, rel, text):
        self.put(f"class/infiniband/{name}/ports/1/{rel}", text)


def recorded_lines(path):
    try:
        with open(path) as f:
            return sum(1 for line in f if line.endswith("\n"))
    except FileNotFoundError:
        return 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RdmaLive(E2E):
    def setUp(self):
        super().setUp()
        self.sys = FakeSysfs(os.path.join(self.tmp.name, "sys"))
        self.sys.hca("mlx5_0", "0000:1a:00.0")
        self.sys.hca("mlx5_1", "0000:3c:00.0")

    def test_half_rate_and_symbol_errors_during_a_live_run(self):
        out = os.path.join(self.tmp.name, "fabric.jsonl")
        env = dict(os.environ, FAKE_NVML_SCENARIO=scenario_4gpu())
        count = 16
        rec = subprocess.Popen(
            [GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none", "--sys-root", self.sys.root,
             "--interval", "250ms", "record", "-o", out, "--count", str(count)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.children.append(rec)
        # The header and two healthy samples first.
        deadline = time.monotonic() + 60
        while recorded_lines(out) < 3:
            self.assertIsNone(rec.poll(), rec.stderr.read() if rec.poll() is not None else "")
            self.assertLess(time.monotonic(), deadline, "record wrote no samples")
            time.sleep(0.02)
        # mlx5_1 re-trains at half its rate; mlx5_0 counts symbol errors and
        # moves data (4-byte words), sample after sample, until the end.
        self.sys.port_file("mlx5_1", "rate", "200 Gb/sec (4X HDR)\n")
        errors, words = 0, 0
        while rec.poll() is None:
            errors += 25
            words += 250_000_000  # 1 GB per step
            self.sys.port_file("mlx5_0", "counters/symbol_error", f"{errors}\n")
            self.sys.port_file("mlx5_0", "counters/port_rcv_data", f"{words}\n")
            time.sleep(0.1)
            self.assertLess(time.monotonic(), deadline + 60, "record did not end")
        self.assertEqual(rec.returncode, 0, rec.stderr.read())

        header, samples = load_scenario(out)
        self.assertEqual(len(samples), count)
        devices = header["host"]["rdma_devices"]
        self.assertEqual([d["device"] for d in devices], ["mlx5_0", "mlx5_1"])
        self.assertEqual(devices[0]["pci_bus_id"], "0000:1a:00.0")
        self.assertEqual(devices[0]["numa_node"], 0)
        self.assertEqual(devices[0]["model"], "MT4129")
        self.assertEqual(devices[0]["ports"][0]["link_layer"], "InfiniBand")
        self.assertEqual(devices[0]["ports"][0]["max_rate_gbps"], 400)
        last = {p["device"]: p for p in samples[-1]["host"]["rdma_ports"]}
        self.assertEqual(last["mlx5_1"]["rate_gbps"], 200)
        self.assertEqual(last["mlx5_0"]["state"], "ACTIVE")
        self.assertGreater(last["mlx5_0"]["symbol_error_total"], 0)
        rx = [s["host"]["rdma_ports"][0].get("rx_bytes_per_s") for s in samples]
        self.assertTrue(any(r and r > 1e9 for r in rx), rx)

        p = run(["diagnose", "--from", out, "--json"])
        self.assertIn(p.returncode, (1, 2), p.stderr)
        findings = json.loads(p.stdout)["findings"]
        degraded = [f for f in findings if f["id"] == "rdma-port-degraded"]
        self.assertEqual(len(degraded), 1, [f["id"] for f in findings])
        self.assertIn("mlx5_1/1", degraded[0]["title"])
        errs = [f for f in findings if f["id"] == "rdma-errors"]
        self.assertEqual(len(errs), 1, [f["id"] for f in findings])
        self.assertIn("mlx5_0/1", errs[0]["title"])
        self.assertIn("symbol errors", errs[0]["evidence"])
        self.assertNotIn("rdma-port-down", {f["id"] for f in findings})

    def test_status_and_metrics_show_the_ports(self):
        self.sys.port_file("mlx5_0", "counters/symbol_error", "7\n")
        self.sys.port_file("mlx5_0", "counters/port_xmit_data", "1000\n")
        p = run(["--sys-root", self.sys.root, "status"], scenario=scenario_4gpu())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("RDMA mlx5_0/1 ACTIVE/LinkUp 400 Gb/s InfiniBand", p.stdout)
        self.assertIn("errors: symbol 7", p.stdout)
        self.assertIn("RDMA mlx5_1/1", p.stdout)

        port = free_port()
        env = dict(os.environ, FAKE_NVML_SCENARIO=scenario_4gpu())
        serve = subprocess.Popen(
            [GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none", "--sys-root", self.sys.root,
             "--interval", "250ms", "serve", "--listen", f"127.0.0.1:{port}"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.children.append(serve)
        deadline = time.monotonic() + 60
        page = ""
        while "node_infiniband_state_id" not in page:
            self.assertIsNone(serve.poll(), serve.stderr.read() if serve.poll() else "")
            self.assertLess(time.monotonic(), deadline, page[-2000:])
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    page = r.read().decode()
            except OSError:
                time.sleep(0.05)
        self.assertIn('node_infiniband_state_id{device="mlx5_0",port="1"} 4', page)
        self.assertIn('node_infiniband_symbol_error_total{device="mlx5_0",port="1"} 7', page)
        self.assertIn('node_infiniband_port_data_transmitted_bytes_total{device="mlx5_0",port="1"} 4000',
                      page)
        self.assertIn('node_infiniband_rate_bytes_per_second{device="mlx5_1",port="1"} 50000000000',
                      page)
        self.assertIn("gpudoctor_rdma_port_up{", page)


class RdmaTop(E2E):
    """top's RDMA line over the same tree, rewritten while it runs: what a
    user reads for each port, and no line on a host without ports."""

    def top(self, sys_root):
        from gd_tmux import Tmux
        argv = [GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none", "--sys-root", sys_root,
                "--interval", "500ms", "top"]
        pane = Tmux(self.tmp.name, argv, env={"FAKE_NVML_SCENARIO": scenario_4gpu(),
                                              "LANG": "C.UTF-8"}, width=160, height=40)
        self.addCleanup(pane.close)
        return pane

    def test_each_port_with_its_rate_state_and_errors(self):
        sys = FakeSysfs(os.path.join(self.tmp.name, "sys"))
        sys.hca("mlx5_0", "0000:1a:00.0")
        sys.hca("mlx5_1", "0000:3c:00.0")
        pane = self.top(sys.root)
        pane.wait_for(r"RDMA  mlx5_0/1 400G rx [0-9.]+ [KMGT]?i?B/s tx [0-9.]+ [KMGT]?i?B/s  mlx5_1/1 400G rx", 30)
        sys.port_file("mlx5_1", "counters/symbol_error", "12\n")
        pane.wait_for(r"mlx5_1/1 400G rx [0-9.]+ [KMGT]?i?B/s tx [0-9.]+ [KMGT]?i?B/s err 12", 15)
        sys.port_file("mlx5_0", "state", "1: DOWN\n")
        sys.port_file("mlx5_0", "phys_state", "3: Disabled\n")
        screen = pane.wait_for(r"RDMA  mlx5_0/1 DOWN  mlx5_1/1 400G", 15)
        # The same figures as status: the port down, the other's errors.
        status = run(["--sys-root", sys.root, "status"], scenario=scenario_4gpu()).stdout
        self.assertIn("RDMA mlx5_0/1 DOWN/Disabled", status)
        self.assertIn("errors: symbol 12", status)
        self.assertEqual(screen.count("RDMA "), 1, screen)

    def test_no_line_without_ports(self):
        sys_root = os.path.join(self.tmp.name, "sys")
        os.makedirs(os.path.join(sys_root, "class"))
        pane = self.top(sys_root)
        screen = pane.wait_for(r"load \d", 30)
        self.assertNotIn("RDMA", screen)


class NoRdma(E2E):
    def test_a_host_without_rdma_lists_nothing_and_says_nothing(self):
        sys_root = os.path.join(self.tmp.name, "sys")
        os.makedirs(os.path.join(sys_root, "class"))
        p = run(["--sys-root", sys_root, "status", "--json"], scenario=scenario_4gpu())
        self.assertEqual(p.returncode, 0, p.stderr)
        header = json.loads(p.stdout.splitlines()[0])
        self.assertEqual(header["host"]["rdma_devices"], [])
        sample = json.loads(p.stdout.splitlines()[1])
        self.assertNotIn("rdma_ports", sample["host"])
        text = run(["--sys-root", sys_root, "status"], scenario=scenario_4gpu()).stdout
        self.assertNotIn("RDMA", text)


if __name__ == "__main__":
    unittest.main()
