"""diagnose --checklist, end to end: the real binary with the fake NVML
scenario, a real child process as the GPU process, fixture /proc + /sys
trees, and no driver at all."""
import json
import os
import unittest

from gd_e2e import (E2E, NO_DRIVER, TRAINER, load_scenario, run, scenario_4gpu,
                    spawn_python, write_scenario)

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "checklist",
                        "fixtures")
GPU_CHECKS = ["persistence-mode", "ecc-mode", "ecc-pending", "ecc-sram", "row-remap",
              "recovery-action", "pcie-link", "power-limit", "pcie-acs", "numa-placement",
              "cuda-runtime"]


def checks(stdout):
    doc = json.loads(stdout)
    for c in doc["checks"]:
        assert set(c) == {"id", "status", "value", "detail"}, c
        assert c["status"] in ("pass", "warn", "fail", "skip"), c
    return doc["checks"]


def expected_exit(items):
    statuses = {c["status"] for c in items}
    return 2 if "fail" in statuses else 1 if "warn" in statuses else 0


def by_id(items, cid):
    return [c for c in items if c["id"] == cid]


def human_bytes(n):
    """The tool's own size format (src/views/format.cc)."""
    units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
    v, u = float(n), 0
    while v >= 1024.0 and u < 5:
        v /= 1024.0
        u += 1
    return f"{n} B" if u == 0 else f"{v:.1f} {units[u]}"


def soft_limit(pid, name):
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith(name):
                return line[len(name):].split()[0]
    raise KeyError(name)


class NoDriver(unittest.TestCase):
    def test_gpu_checks_skip_and_host_checks_run(self):
        p = run(["diagnose", "--checklist", "--json"], nvml=NO_DRIVER)
        items = checks(p.stdout)
        self.assertEqual(p.returncode, expected_exit(items), p.stdout + p.stderr)
        self.assertEqual(by_id(items, "driver")[0]["status"], "skip")
        self.assertEqual(by_id(items, "driver")[0]["detail"], "no NVIDIA driver")
        for cid in GPU_CHECKS:
            got = by_id(items, cid)
            self.assertEqual(len(got), 1, cid)
            self.assertEqual((got[0]["status"], got[0]["detail"]), ("skip", "no NVIDIA driver"),
                             cid)
        with open("/proc/sys/vm/swappiness") as f:
            swap = f.read().strip()
        self.assertIn(f"vm.swappiness = {swap}", by_id(items, "swappiness")[0]["value"])

    def test_flags_of_a_sampled_diagnosis_are_refused_not_ignored(self):
        trace = scenario_4gpu()
        for flag in (["--from", trace], ["--duration", "5s"], ["--gpu", "0"],
                     ["--min-severity", "warning"]):
            with self.subTest(flag=flag[0]):
                p = run(["diagnose", "--checklist"] + flag, nvml=NO_DRIVER)
                self.assertNotEqual(p.returncode, 0)
                self.assertEqual(p.stdout, "")
                lines = p.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertIn("--checklist", lines[0])
                self.assertIn(flag[0], lines[0])

    def test_text_output_lists_every_check_and_the_summary(self):
        p = run(["diagnose", "--checklist"], nvml=NO_DRIVER)
        self.assertIn(p.returncode, (0, 1, 2), p.stderr)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0].split(), ["CHECK", "VALUE"])
        value_col = lines[0].index("VALUE")
        rows = [l for l in lines[1:] if l[:4] in ("pass", "warn", "fail", "skip")]
        self.assertGreaterEqual(len(rows), 17)
        for row in rows:
            self.assertEqual(row[value_col - 2:value_col], "  ", row)
        self.assertRegex(lines[-1], r"^\d+ pass, \d+ warn, \d+ fail, \d+ skip$")
        self.assertIn("no NVIDIA driver", p.stdout)

    def test_misconfigured_fixture_tree_warns(self):
        bad = os.path.join(FIXTURES, "misconfigured")
        p = run(["--proc-root", bad + "/proc", "--sys-root", bad + "/sys",
                 "diagnose", "--checklist", "--json"], nvml=NO_DRIVER)
        items = checks(p.stdout)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        warned = {c["id"] for c in items if c["status"] == "warn"}
        self.assertEqual(warned, {"swappiness", "transparent-hugepages", "cpu-governor",
                                  "iommu", "kernel-module"})
        self.assertEqual(by_id(items, "kernel-module")[0]["value"],
                         "module 550.54.14, no libnvidia-ml.so.1")


# Above the kernel's PID_MAX_LIMIT (4194304): no process ever has these.
NEVER_LIVE_PID = 4194304 + 100


def never_live_pids(header, sample):
    """Maps every pid of the sample but init to one no process can have."""
    mapped = {}

    def remap(pid):
        return pid if pid in (0, 1) else mapped.setdefault(pid, NEVER_LIVE_PID + len(mapped))

    for g in sample["gpus"]:
        for proc in g.get("processes", []):
            proc["pid"] = remap(proc["pid"])
    for proc in sample.get("processes", []):
        proc["pid"] = remap(proc["pid"])
        if "ppid" in proc:
            proc["ppid"] = remap(proc["ppid"])


class FakeScenario(E2E):
    def scenario(self, edit=None):
        header, samples = load_scenario(scenario_4gpu())
        samples = samples[:1]
        if edit:
            edit(header, samples[0])
        return write_scenario(header, samples, self.tmp.name)

    def test_scenario_settings_are_checked(self):
        def edit(header, s):
            s["gpus"][1].update(pcie_gen=3, util_pct=90.0, pcie_tx_bytes_per_s=2_000_000_000)
            s["gpus"][2]["remapped_rows_pending"] = True
        p = run(["diagnose", "--checklist", "--json"], scenario=self.scenario(edit))
        items = checks(p.stdout)
        self.assertEqual(p.returncode, expected_exit(items), p.stderr)
        self.assertEqual(by_id(items, "driver")[0],
                         {"id": "driver", "status": "pass",
                          "value": "driver 535.129.03, NVML 12.535.129.03, CUDA 12.2",
                          "detail": ""})
        pm = {c["value"]: c["status"] for c in by_id(items, "persistence-mode")}
        self.assertEqual(pm, {"GPU 0,1,2: on": "pass", "GPU 3: off": "warn"})
        power = {c["value"]: c["status"] for c in by_id(items, "power-limit")}
        self.assertEqual(power["GPU 3: 500 W (default 700 W)"], "warn")
        pcie = {c["value"]: c for c in by_id(items, "pcie-link")}
        self.assertEqual(pcie["GPU 1: Gen3 x16 (max Gen4 x16), under load"]["status"], "warn")
        idle = pcie["GPU 3: Gen1 x16 (max Gen5 x16), idle"]
        self.assertEqual(idle["status"], "pass")
        self.assertIn("normal", idle["detail"])
        pending = {c["value"]: c["status"] for c in by_id(items, "ecc-pending")}
        self.assertEqual(pending["GPU 2: row remap pending"], "warn")
        self.assertGreaterEqual(p.returncode, 1)

    def test_text_and_json_agree(self):
        # Two runs read the real /proc: the scenario's pids (4242, 5101...)
        # may belong to some other process in one run and not the next (a
        # build beside the tests cycles a pid_max of 32768 in minutes), so
        # here they are pids no process can have.
        path = self.scenario(never_live_pids)
        text = run(["diagnose", "--checklist"], scenario=path)
        items = checks(run(["diagnose", "--checklist", "--json"], scenario=path).stdout)
        self.assertEqual(text.returncode, expected_exit(items), text.stderr)
        for c in items:
            self.assertIn(c["value"], text.stdout)
            if c["status"] in ("warn", "fail"):
                self.assertIn("-> " + c["detail"], text.stdout)


    def test_fixture_trees_decide_the_exit_code(self):
        """The scenario's pid 4242 (GPU 0) has limits and status in the
        fixture trees; everything else there is healthy or misconfigured."""
        def healthy_gpus(header, s):
            header["gpus"][3].update(persistence_mode=True, power_limit_w=700.0)
        path = self.scenario(healthy_gpus)
        healthy = os.path.join(FIXTURES, "healthy")
        p = run(["--proc-root", healthy + "/proc", "--sys-root", healthy + "/sys",
                 "diagnose", "--checklist", "--json"], scenario=path)
        items = checks(p.stdout)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(by_id(items, "kernel-module")[0]["status"], "pass")
        nofile = [c for c in by_id(items, "open-files-limit") if "pid 4242" in c["value"]]
        self.assertEqual(nofile[0]["value"], "pid 4242: 1048576 (hard 1048576)")

        bad = os.path.join(FIXTURES, "misconfigured")
        p = run(["--proc-root", bad + "/proc", "--sys-root", bad + "/sys",
                 "diagnose", "--checklist", "--json"], scenario=path)
        items = checks(p.stdout)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(by_id(items, "kernel-module")[0]["value"],
                         "module 550.54.14, NVML library 535.129.03")
        numa = [c for c in by_id(items, "numa-placement") if "pid 4242" in c["value"]]
        self.assertEqual(numa[0]["status"], "warn")
        self.assertEqual(numa[0]["value"], "pid 4242: GPU 0 on node 0; cpus 4-7, mems 1")


class RealProcess(E2E):
    """A real trainer with two data-loader workers is the GPU process."""

    def test_process_checks_read_the_real_process(self):
        trainer = spawn_python(TRAINER.format(workers=2))
        self.children.append(trainer)
        pids = [int(x) for x in trainer.stdout.readline().split(",")]
        header, samples = load_scenario(scenario_4gpu())
        samples = samples[:1]
        for g in samples[0]["gpus"]:
            g["processes"] = []
        samples[0]["gpus"][0]["processes"] = [
            {"pid": pids[0], "used_bytes": 30 << 30, "type": "compute"}]
        path = write_scenario(header, samples, self.tmp.name)

        p = run(["diagnose", "--checklist", "--json"], scenario=path)
        items = checks(p.stdout)
        self.assertEqual(p.returncode, expected_exit(items), p.stderr)
        who = f"(pid {pids[0]})"

        nofile = by_id(items, "open-files-limit")
        self.assertEqual(len(nofile), 1, nofile)
        self.assertIn(who, nofile[0]["value"])
        self.assertIn(f": {soft_limit(pids[0], 'Max open files')} (hard ",
                      nofile[0]["value"])

        st = os.statvfs(f"/proc/{pids[0]}/root/dev/shm")
        size = st.f_blocks * st.f_frsize
        shm = by_id(items, "dev-shm")
        self.assertEqual(len(shm), 1, shm)
        self.assertIn(who, shm[0]["value"])
        self.assertTrue(shm[0]["value"].endswith(f": {human_bytes(size)}, 2 workers"),
                        shm[0]["value"])
        self.assertEqual(shm[0]["status"], "warn" if size < (1 << 30) else "pass")

        memlock = by_id(items, "memlock-limit")
        self.assertIn(who, memlock[0]["value"])
        numa = by_id(items, "numa-placement")
        self.assertNotEqual(numa[0]["detail"], "no GPU processes")
        # A plain Python child maps no CUDA runtime.
        self.assertEqual(by_id(items, "cuda-runtime")[0]["status"], "skip")


if __name__ == "__main__":
    unittest.main()
