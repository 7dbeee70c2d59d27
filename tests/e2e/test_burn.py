"""burn end to end: the real binary drives the fake libcuda.so.1 (tests/fake_cuda)
while it watches the fake NVML and a kernel log; every verdict path from a fault
of either side, exit codes, --json, --record, refusals, Ctrl-C and a hung GPU."""
import copy
import json
import os
import pty
import select
import signal
import subprocess
import time
import unittest

from gd_e2e import E2E, FAKE_NVML, GPUDOCTOR, load_scenario, scenario_4gpu, write_scenario

FAKE_CUDA = os.environ.get("FAKE_CUDA_LIB", "")
GIB = 1 << 30
T0 = 1732262400.0
GPU_KEYS = ["gpu", "verdict", "reasons", "gflops_fp32", "gflops_fp64", "compute_errors",
            "memory_errors", "h2d_bytes_per_s", "d2h_bytes_per_s", "peak_temp_c", "throttled_pct"]
XID_79_GPU6 = ("NVRM: Xid (PCI:0000:c1:00): 79, pid='<unknown>', name=<unknown>, "
               "GPU has fallen off the bus.\n")


def a100_node(n=8):
    """n identical A100s (the 4-GPU scenario's first board), idle, no processes."""
    header, _ = load_scenario(scenario_4gpu())
    proto = header["gpus"][0]
    header["gpus"] = []
    for i in range(n):
        g = copy.deepcopy(proto)
        g.update(index=i, uuid=f"GPU-00000000-0000-4000-8000-00000000000{i}",
                 pci_bus_id=f"00000000:{0x07 + i * 0x1f:02X}:00.0", serial=f"15621210000{i}")
        header["gpus"].append(g)
    return header


def gpu_reading(i, t, thermal=False, gen=4, dbe=0, remap=0):
    reasons = ["sw_power_cap"] + (["sw_thermal_slowdown"] if thermal else [])
    return {"index": i, "util_pct": 100.0, "mem_util_pct": 60.0, "mem_used_bytes": 2 * GIB,
            "temp_c": 88 if thermal else 70 + i, "mem_temp_c": 65, "power_w": 395.0,
            "energy_mj_total": 900000000 + t * 1000, "fan_pct": None,
            "sm_clock_mhz": 1200 if thermal else 1410, "mem_clock_mhz": 1593, "pstate": 0,
            "clock_event_reasons": reasons, "pcie_gen": gen, "pcie_width": 16,
            "pcie_tx_bytes_per_s": 10**9, "pcie_rx_bytes_per_s": 10**9, "pcie_replay_total": 0,
            "ecc_sbe_volatile_total": 0, "ecc_dbe_volatile_total": dbe,
            "retired_pages_pending": False, "remapped_rows_pending": remap > 0,
            "remapped_rows_failure": False, "remapped_rows_correctable_total": 0,
            "remapped_rows_uncorrectable_total": remap, "processes": []}


def fault_node_samples(n=40):
    """GPU 4 thermally slowed from the second sample on; GPU 5's link trained
    at Gen3 under load (max Gen4); GPU 1's DBE counter and uncorrectable row
    remaps move from the fourth second."""
    samples = []
    for t in range(n):
        gpus = []
        for i in range(8):
            g = gpu_reading(i, t, thermal=(i == 4 and t >= 1), gen=3 if i == 5 else 4,
                            dbe=1 if (i == 1 and t >= 3) else 0,
                            remap=1 if (i == 1 and t >= 3) else 0)
            gpus.append(g)
        samples.append({"t": T0 + t, "gpus": gpus, "host": {"cpu_util_pct": 5.0},
                        "processes": [], "events": []})
    return samples


FAULTS = [{"gpu": 0, "compute_errors": 5}, {"gpu": 1, "bitflips": 3},
          {"gpu": 2, "speed": 0.6},
          {"gpu": 3, "error": "CUDA_ERROR_ECC_UNCORRECTABLE", "after_s": 2}]


def burn_cmd(kmsg="none", interval="500ms"):
    return [GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", kmsg, "--interval", interval, "burn",
            "--cuda-lib", FAKE_CUDA, "--cublas-lib", "none"]


def burn_env(scenario, faults=None, memory_mib=16, **extra):
    env = dict(os.environ, FAKE_NVML_SCENARIO=scenario, FAKE_CUDA_MEMORY_MIB=str(memory_mib))
    env.pop("FAKE_CUDA_FAULTS", None)
    if faults:
        env["FAKE_CUDA_FAULTS"] = json.dumps(faults)
    env.update(extra)
    return env


class BurnE2E(E2E):
    def setUp(self):
        super().setUp()
        if not FAKE_CUDA or not os.path.exists(FAKE_CUDA):
            self.fail(f"fake libcuda.so.1 not found (FAKE_CUDA_LIB={FAKE_CUDA!r})")

    def node(self, n=8, samples=None, faults=None):
        header = a100_node(n)
        if samples is None:
            samples = [{"t": T0 + t, "gpus": [gpu_reading(i, t) for i in range(n)],
                        "host": {"cpu_util_pct": 5.0}, "processes": [], "events": []}
                       for t in range(40)]
        return write_scenario(header, samples, self.tmp.name)


class EightGpusWithFaults(BurnE2E):
    """One 8 s burn of 8 fake A100s, a fault of each kind on its own GPU
    (GPU 7 healthy), checked from the JSON, the text report and the trace."""

    @classmethod
    def setUpClass(cls):
        cls.holder = BurnE2E("run")
        cls.holder.setUp()
        cls.dir = cls.holder.tmp.name
        scenario = write_scenario(a100_node(), fault_node_samples(), cls.dir)
        cls.kmsg = os.path.join(cls.dir, "kern.log")
        open(cls.kmsg, "w").close()
        cls.trace = os.path.join(cls.dir, "burn.jsonl")
        cmd = burn_cmd(kmsg=cls.kmsg) + ["--duration", "8s", "--json", "--record", cls.trace]
        started = time.time()
        p = subprocess.Popen(cmd, env=burn_env(scenario, FAULTS), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        # The kernel log is followed from when burn opened it: the trace's
        # header is written once the GPUs are chosen, so lines after it count.
        deadline = time.time() + 30
        while time.time() < deadline and not (os.path.exists(cls.trace) and
                                              os.path.getsize(cls.trace)):
            time.sleep(0.05)
        time.sleep(1.0)
        with open(cls.kmsg, "a") as f:
            f.write(XID_79_GPU6)
        cls.out, cls.err = p.communicate(timeout=90)
        cls.wall = time.time() - started
        cls.code = p.returncode
        cls.doc = json.loads(cls.out) if cls.out.strip() else None
        cls.by_gpu = {g["gpu"]: g for g in cls.doc["gpus"]} if cls.doc else {}

    @classmethod
    def tearDownClass(cls):
        cls.holder.tearDown()

    def setUp(self):
        super().setUp()
        self.assertIsNotNone(self.doc, f"no JSON (exit {self.code}): {self.err}")

    def reasons(self, gpu):
        return " | ".join(self.by_gpu[gpu]["reasons"])

    def test_json_has_the_shape_the_issue_gives(self):
        self.assertEqual(sorted(self.by_gpu), list(range(8)))
        for g in self.doc["gpus"]:
            self.assertEqual(list(g)[:len(GPU_KEYS)], GPU_KEYS)
            self.assertIn(g["verdict"], ("pass", "warn", "fail"))
            self.assertIsInstance(g["reasons"], list)
            self.assertTrue(g["reasons"], g)
        self.assertIsInstance(self.doc["findings"], list)
        self.assertEqual(self.code, 2, self.err)  # a GPU failed
        self.assertEqual(self.doc["exit_code"], 2)
        self.assertLess(self.wall, 30, "an 8 s burn took too long")

    def test_healthy_gpu_passes_with_its_figures(self):
        g = self.by_gpu[7]
        self.assertEqual(g["verdict"], "pass", self.reasons(7))
        self.assertEqual((g["compute_errors"], g["memory_errors"]), (0, 0))
        # The fake models 95% of SMs x lanes x 2 x clock: 108 x 64 x 2 x 1410 MHz.
        self.assertAlmostEqual(g["gflops_fp32"], 108 * 64 * 2 * 1.41 * 0.95, delta=50)
        self.assertAlmostEqual(g["gflops_fp64"], 108 * 32 * 2 * 1.41 * 0.95, delta=50)
        self.assertGreater(g["h2d_bytes_per_s"], 20e9)
        self.assertGreater(g["d2h_bytes_per_s"], 20e9)
        self.assertEqual(g["peak_temp_c"], 77)
        self.assertEqual(g["throttled_pct"], 0)
        text = self.reasons(7)
        self.assertIn("TFLOP/s FP32 (peers", text)
        self.assertIn("95% of the 19.5 TFLOP/s peak", text)
        # The memtest is time-boxed: on a loaded machine (sanitizers, 2
        # cores) fewer of its 5 patterns fit in the 8 s burn.
        self.assertRegex(text, r"memtest [1-5] patterns over [0-9.]+ MiB")
        self.assertIn("on Gen4 x16", text)
        self.assertIn("no tensor-core GEMM: no cuBLAS", " ".join(g["notes"]) + text)

    def test_wrong_results_are_compute_errors(self):
        g = self.by_gpu[0]
        self.assertEqual(g["verdict"], "fail")
        self.assertEqual(g["compute_errors"], 5)
        self.assertIn("5 compute errors", self.reasons(0))

    def test_stuck_bits_are_memory_errors_tied_to_the_counters_that_moved(self):
        g = self.by_gpu[1]
        self.assertEqual(g["verdict"], "fail")
        self.assertEqual(g["memory_errors"], 3)
        self.assertEqual(len(g["bad_addresses"]), 3)
        text = self.reasons(1)
        self.assertIn("3 memory errors at 0x", text)
        self.assertIn("DBE +1", text)
        self.assertIn("rows remapped +1", text)

    def test_slow_gpu_is_slower_than_its_identical_peers(self):
        g = self.by_gpu[2]
        self.assertEqual(g["verdict"], "warn", self.reasons(2))
        self.assertAlmostEqual(g["gflops_fp32"] / self.by_gpu[7]["gflops_fp32"], 0.6, delta=0.03)
        self.assertIn("40% slower than its 6 identical peers", self.reasons(2))

    def test_cuda_error_stops_the_gpu_and_fails_it(self):
        g = self.by_gpu[3]
        self.assertEqual(g["verdict"], "fail")
        self.assertIn("CUDA_ERROR_ECC_UNCORRECTABLE", g["error"])
        self.assertIn("the GPU stopped working", self.reasons(3))
        self.assertIsNone(g["h2d_bytes_per_s"])  # it never reached the copy test

    def test_thermal_slowdown_share_and_temperature(self):
        g = self.by_gpu[4]
        self.assertEqual(g["verdict"], "warn", self.reasons(4))
        self.assertGreater(g["throttled_pct"], 70)
        self.assertEqual(g["peak_temp_c"], 88)
        self.assertRegex(self.reasons(4), r"thermal slowdown \d+% of the run at 88 C")

    def test_link_below_its_maximum_under_load(self):
        g = self.by_gpu[5]
        self.assertEqual(g["verdict"], "warn", self.reasons(5))
        self.assertRegex(self.reasons(5),
                         r"PCIe Gen3 x16 under load \(max Gen4 x16\): 1\d\.\d GB/s of ~25\.2 GB/s")
        self.assertLess(g["h2d_bytes_per_s"], 0.6 * self.by_gpu[7]["h2d_bytes_per_s"])

    def test_xid_from_the_kernel_log_fails_its_gpu(self):
        g = self.by_gpu[6]
        self.assertEqual(g["verdict"], "fail", self.reasons(6))
        self.assertEqual(g["xids"], [79])
        self.assertIn("Xid 79", self.reasons(6))
        self.assertIn("xid-error", [f["id"] for f in self.doc["findings"]])

    def test_findings_of_the_burn_window_are_reported(self):
        ids = {f["id"] for f in self.doc["findings"]}
        self.assertIn("thermal-throttling", ids)
        self.assertIn("pcie-link-degraded", ids)
        for f in self.doc["findings"]:
            self.assertTrue({"id", "severity", "gpus", "title", "evidence", "action"} <= set(f))

    def test_recorded_trace_diagnoses_the_same_window(self):
        header, samples = load_scenario(self.trace)
        self.assertEqual(len(header["gpus"]), 8)
        self.assertGreaterEqual(len(samples), 10)
        p = subprocess.run([GPUDOCTOR, "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--kmsg",
                            "none", "diagnose", "--from", self.trace, "--json"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        ids = {f["id"] for f in json.loads(p.stdout)["findings"]}
        self.assertTrue({"xid-error", "thermal-throttling", "pcie-link-degraded"} <= ids, ids)


class TextAndLive(BurnE2E):
    def test_live_lines_on_a_terminal_and_the_text_report(self):
        scenario = self.node(2)
        master, slave = pty.openpty()
        p = subprocess.Popen(burn_cmd(interval="250ms") + ["--duration", "3s"],
                             env=burn_env(scenario), stdout=subprocess.PIPE, stderr=slave,
                             text=True)
        os.close(slave)
        live = b""
        while True:
            r, _, _ = select.select([master], [], [], 20)
            if not r:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            live += chunk
        out, _ = p.communicate(timeout=30)
        os.close(master)
        self.assertEqual(p.returncode, 0, live.decode(errors="replace"))
        text = live.decode(errors="replace")
        self.assertIn("gpudoctor burn — ", text)
        self.assertIn("CUDA 12.2", text)
        self.assertRegex(text, r"GPU 0\s+compute FP32\s+\d+%\s+\d+\.\d TFLOP/s\s+70 C\s+395 W\s+"
                               r"SM\s+1410 MHz\s+events: power cap\s+errors 0")
        self.assertIn("\x1b[A", text)  # redrawn in place
        self.assertRegex(text, r"GPU 1\s+(memory|pcie)\s+\d+%")
        self.assertIn("GPU 0  PASS  NVIDIA A100-SXM4-80GB  00000000:07:00.0", out)
        self.assertIn("2 pass, 0 warn, 0 fail", out)
        self.assertIn("Diagnosis of the burn window", out)

    def test_tests_and_gpu_subsets(self):
        scenario = self.node(4)
        p = subprocess.run(burn_cmd() + ["--duration", "2s", "--gpu", "3,1", "--tests", "pcie",
                                         "--json"],
                           env=burn_env(scenario), capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stdout)
        self.assertEqual([g["gpu"] for g in doc["gpus"]], [1, 3])
        self.assertEqual(doc["tests"], ["pcie"])
        for g in doc["gpus"]:
            self.assertIsNone(g["gflops_fp32"])
            self.assertIsNone(g["gflops_fp64"])
            self.assertGreater(g["h2d_bytes_per_s"], 20e9)


    def test_every_phase_measures_once_when_an_earlier_one_overran(self):
        # Each piece of GPU work takes 600 ms more of wall time (a loaded host,
        # as CI's sanitizer pass is): the memtest's first pattern alone runs
        # past the end of a 1 s burn. The copy test still measures one round
        # instead of reporting no figure.
        scenario = self.node(1)
        p = subprocess.run(burn_cmd() + ["--duration", "1s", "--tests", "memory,pcie", "--json"],
                           env=burn_env(scenario, [{"gpu": 0, "op_wall_ms": 600}]),
                           capture_output=True, text=True, timeout=90)
        self.assertEqual(p.returncode, 0, p.stderr)
        g = json.loads(p.stdout)["gpus"][0]
        self.assertEqual(g["verdict"], "pass", g["reasons"])
        self.assertGreater(g["h2d_bytes_per_s"], 20e9)
        self.assertGreater(g["d2h_bytes_per_s"], 20e9)
        self.assertRegex(" ".join(g["reasons"]), r"memtest [1-5] patterns? over")

    def test_a_trace_that_cannot_be_written_does_not_lose_the_report(self):
        # The file may grow to 16 KiB (the header and a few samples fit);
        # then writes fail with EFBIG, as on a full disk. The burn goes on,
        # the verdicts come out, and the report says the trace stopped.
        scenario = self.node(2)
        trace = os.path.join(self.tmp.name, "burn.jsonl")

        def limit_file_size():
            import resource
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (16 << 10, 16 << 10))

        p = subprocess.run(burn_cmd(interval="100ms") + ["--duration", "3s", "--tests", "pcie",
                                                         "--record", trace, "--json"],
                           env=burn_env(scenario), capture_output=True, text=True, timeout=60,
                           preexec_fn=limit_file_size)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stdout)
        self.assertEqual([g["verdict"] for g in doc["gpus"]], ["pass", "pass"])
        self.assertIn("burn.jsonl", doc["record_error"])
        self.assertGreater(os.path.getsize(trace), 0)


class CannotRun(BurnE2E):
    def test_without_a_driver_it_says_so_and_exits_3(self):
        p = subprocess.run([GPUDOCTOR, "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--kmsg",
                            "none", "burn", "--cuda-lib", "/nonexistent/libcuda.so.1"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 3)
        self.assertEqual(p.stdout, "")
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("gpudoctor: burn: no NVIDIA driver found: cannot load "
                      "/nonexistent/libcuda.so.1", lines[0])

    def test_a_driver_without_gpus_exits_3(self):
        scenario = self.node(2)
        env = burn_env(scenario, FAKE_CUDA_SCENARIO="/nonexistent.jsonl")
        env["FAKE_CUDA_SCENARIO"] = ""
        env.pop("FAKE_NVML_SCENARIO")
        p = subprocess.run(burn_cmd(), env=env, capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("CUDA_ERROR_NO_DEVICE", p.stderr)

    def test_busy_gpus_are_refused_unless_forced(self):
        p = subprocess.run(burn_cmd() + ["--duration", "2s", "--tests", "pcie"],
                           env=burn_env(scenario_4gpu()), capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(p.returncode, 3)
        self.assertIn("GPU 0 has 1 process (pid 4242)", p.stderr)
        self.assertIn("GPU 2 has 2 processes (pid 5100, pid 5101)", p.stderr)
        self.assertIn("--force", p.stderr)
        p = subprocess.run(burn_cmd() + ["--duration", "2s", "--tests", "pcie", "--gpu", "1",
                                         "--force", "--json"],
                           env=burn_env(scenario_4gpu()), capture_output=True, text=True,
                           timeout=30)
        self.assertIn(p.returncode, (0, 1, 2), p.stderr)
        self.assertEqual([g["gpu"] for g in json.loads(p.stdout)["gpus"]], [1])

    def test_bad_flags_are_usage_errors(self):
        scenario = self.node(2)
        for args, what in [(["--gpu", "7"], "--gpu 7: no such GPU (this node has GPUs 0,1)"),
                           (["--gpu", "0x1"], "--gpu"), (["--tests", "gpu"], "--tests"),
                           (["--memory-fraction", "nan"], "--memory-fraction"),
                           (["--memory-fraction", "1.5"], "out of range 0.05..0.98"),
                           (["--duration", "0"], "--duration")]:
            p = subprocess.run(burn_cmd() + args, env=burn_env(scenario), capture_output=True,
                               text=True, timeout=30)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(what, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)


class StopAndHang(BurnE2E):
    def test_ctrl_c_stops_every_gpu_and_reports_what_ran(self):
        scenario = self.node(4)
        p = subprocess.Popen(burn_cmd() + ["--duration", "60s", "--json"],
                             env=burn_env(scenario), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(3)
        sent = time.time()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        self.assertLess(time.time() - sent, 5, "Ctrl-C took too long to stop the GPUs")
        self.assertEqual(p.returncode, 3, err)  # stopped early, nothing failed
        doc = json.loads(out)
        self.assertTrue(doc["interrupted"])
        self.assertLess(doc["ran_s"], 10)
        for g in doc["gpus"]:
            self.assertEqual(g["verdict"], "pass", g["reasons"])
            self.assertIsNotNone(g["gflops_fp32"])
            self.assertIsNone(g["h2d_bytes_per_s"])  # never reached

    def test_hung_gpu_fails_and_does_not_hold_up_the_others(self):
        scenario = self.node(2)
        started = time.time()
        p = subprocess.run(burn_cmd() + ["--duration", "3s", "--json"],
                           env=burn_env(scenario, [{"gpu": 1, "hang_after_s": 1}]),
                           capture_output=True, text=True, timeout=60)
        self.assertLess(time.time() - started, 20)
        self.assertEqual(p.returncode, 2, p.stderr)
        doc = json.loads(p.stdout)
        by = {g["gpu"]: g for g in doc["gpus"]}
        self.assertEqual(by[0]["verdict"], "pass", by[0]["reasons"])
        self.assertEqual(by[1]["verdict"], "fail")
        self.assertTrue(by[1]["hung"])
        self.assertIn("stopped responding during compute FP32", " ".join(by[1]["reasons"]))


if __name__ == "__main__":
    unittest.main()
