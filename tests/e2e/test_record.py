"""record, end to end: a trace recorded under the fake reproduces the GPU
part of the scenario it replays; Ctrl-C leaves a valid file; zstd; stdout."""
import os
import signal
import subprocess
import time
import unittest

from gd_e2e import (E2E, FAKE_NVML, GPUDOCTOR, NO_DRIVER, load_scenario, read_trace, run,
                    scenario_4gpu, strip_nulls)


class Record(E2E):
    def test_recorded_trace_reproduces_the_replayed_gpu_part(self):
        want_header, want = load_scenario(scenario_4gpu())
        out = os.path.join(self.tmp.name, "rec.jsonl")
        # Every read in every sample: what was replayed comes back exactly.
        p = run(["--interval", "1s", "--slow-reads", "0s", "record", "-o", out,
                 "--count", "4"], scenario=scenario_4gpu(), timeout=60)
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

    def test_progress_on_a_terminal_only(self):
        """On a terminal, stderr shows the samples, file size and time so
        far on one line, erased at the end; in a pipe, only the summary."""
        import pty
        out = os.path.join(self.tmp.name, "rec.jsonl")
        master, slave = pty.openpty()
        env = dict(os.environ, FAKE_NVML_SCENARIO=scenario_4gpu())
        p = subprocess.Popen([GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none",
                              "--interval", "500ms", "record", "-o", out, "--count", "5"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave,
                             env=env)
        os.close(slave)
        seen = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        os.close(master)
        self.assertEqual(p.wait(30), 0, seen)
        text = seen.decode()
        self.assertRegex(text, r"\rgpudoctor: recording: [1-5] samples, \d[\d.]* (B|KiB|MiB), "
                               r"\d+s \(Ctrl-C to stop\)")
        self.assertIn("\r\x1b[K", text)  # erased before the summary
        self.assertTrue(text.rstrip().endswith(f"gpudoctor: recorded 5 samples to {out}"), text)
        p = run(["--interval", "500ms", "record", "-o", out, "--count", "2"],
                scenario=scenario_4gpu(), timeout=60)
        self.assertEqual(p.stderr, f"gpudoctor: recorded 2 samples to {out}\n")

    def test_costly_reads_repeat_between_refreshes(self):
        """By default the NVML reads that cost the driver milliseconds are
        refreshed every 5 s: samples within 5 s of the first repeat its
        energy counter and PCIe throughput while the cheap fields (and the
        processes) follow the replay."""
        _, want = load_scenario(scenario_4gpu())
        out = os.path.join(self.tmp.name, "rec.jsonl")
        p = run(["--interval", "1s", "record", "-o", out, "--count", "3"],
                scenario=scenario_4gpu(), timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        _, got = load_scenario(out)
        self.assertLess(got[-1]["t"] - got[0]["t"], 5)
        costly = ("energy_mj_total", "pcie_tx_bytes_per_s", "pcie_rx_bytes_per_s",
                  "pcie_replay_total")
        first = {g["index"]: {k: g.get(k) for k in costly} for g in got[0]["gpus"]}
        for s in got[1:]:
            for g in s["gpus"]:
                self.assertEqual({k: g.get(k) for k in costly}, first[g["index"]])
        temps = [[g["temp_c"] for g in s["gpus"]] for s in got]
        wanted = [[g["temp_c"] for g in s["gpus"]] for s in want]
        for t in temps:
            self.assertIn(t, wanted)
        self.assertGreater(len({tuple(t) for t in temps}), 1, "cheap reads did not follow")

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

    def test_pci_gpus_kernel_module_and_kernel_log_without_nvml(self):
        # NVML cannot start; a fake /sys lists one GPU bound to nvidia below
        # root port 0000:00:03.0 (and its audio function), a fake /proc has
        # the open kernel module's version file, and the kernel log gets a
        # real AER burst of that port (rwth-i6/returnn#1500) and noise.
        sys_root = os.path.join(self.tmp.name, "sys")
        devices = os.path.join(sys_root, "bus", "pci", "devices")
        os.makedirs(devices)
        for name, cls, driver in [("0000:03:00.0", "0x030200", "nvidia"),
                                  ("0000:03:00.1", "0x040300", "snd_hda_intel")]:
            tree = os.path.join("pci0000:00", "0000:00:03.0", name)
            dev = os.path.join(sys_root, "devices", tree)
            os.makedirs(dev)
            for f, v in (("vendor", "0x10de"), ("class", cls)):
                with open(os.path.join(dev, f), "w") as fh:
                    fh.write(v + "\n")
            os.symlink("../../../../bus/pci/drivers/" + driver, os.path.join(dev, "driver"))
            os.symlink("../../../devices/" + tree, os.path.join(devices, name))
        proc_root = os.path.join(self.tmp.name, "proc")
        os.makedirs(os.path.join(proc_root, "driver", "nvidia"))
        with open(os.path.join(proc_root, "driver", "nvidia", "version"), "w") as f:
            f.write("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  "
                    "Release Build  (dvs-builder@U16-A24-9-2)  Thu Oct 10 12:15:00 UTC 2024\n")
        kmsg = os.path.join(self.tmp.name, "kern.log")
        open(kmsg, "w").close()
        out = os.path.join(self.tmp.name, "pci.jsonl")
        p = subprocess.Popen([GPUDOCTOR, "--nvml-lib", NO_DRIVER, "--kmsg", kmsg,
                              "--sys-root", sys_root, "--proc-root", proc_root,
                              "--interval", "250ms", "record", "-o", out, "--count", "8"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            # The header is written once the log is open: lines after it count.
            deadline = time.time() + 20
            while time.time() < deadline and not (os.path.exists(out) and os.path.getsize(out)):
                time.sleep(0.05)
            with open(kmsg, "a") as f:
                f.write("[  +0.000008] pcieport 0000:00:03.0: AER: device recovery failed\n"
                        "[  +0.000001] pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) "
                        "error received: 0000:00:03.0\n"
                        "[  +0.000004] pcieport 0000:00:03.0: PCIe Bus Error: severity=Uncorrected "
                        "(Fatal), type=Transaction Layer, (Requester ID)\n"
                        "[  +0.000898] pcieport 0000:00:03.0:   device [8086:6f08] error "
                        "status/mask=00004020/00000000\n"
                        "[  +0.000889] pcieport 0000:00:03.0:    [ 5] SDES                  \n"
                        "[  12.0] e1000e: eth0 NIC Link is Up\n")
            _, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
        self.assertEqual(p.returncode, 0, err)
        header, samples = load_scenario(out)
        self.assertEqual(header["nvml_status"], "no_driver")
        self.assertEqual(header["driver"]["kernel_module_version"], "565.57.01")
        self.assertEqual(header["pci_gpus"], [{"address": "0000:03:00.0", "driver": "nvidia"}])
        aer = [e for s in samples for e in s.get("events") or [] if e["kind"] == "pcie_aer"]
        self.assertEqual(len(aer), 1, aer)
        self.assertEqual(aer[0]["severity"], "fatal")
        self.assertEqual(aer[0]["pci_address"], "0000:03:00.0")
        # "device recovery failed" and the NIC line: read, not understood.
        self.assertEqual(samples[-1]["host"]["kernel_lines_unclassified_total"], 2)

    def test_unwritable_output_is_a_clear_error(self):
        p = run(["record", "-o", "/nonexistent-dir/x.jsonl", "--count", "1"], nvml=NO_DRIVER)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("/nonexistent-dir/x.jsonl", p.stderr)


if __name__ == "__main__":
    unittest.main()
