"""Which GPU processes form one job, live: real processes started the way
users start them (two jobs from one shell; two ranks under one launcher)
are in the fake NVML's process list, and gpudoctor must tell the jobs
apart from the ancestors it reads in /proc, as it does in traces."""
import json
import subprocess
import sys
import unittest

from gd_e2e import E2E, run, scenario_4gpu, load_scenario, write_scenario

GIB = 1 << 30
T0 = 1732262400.0
SLEEP = "import time; time.sleep(120)"

# Two independent jobs started from one interactive shell.
SHELL_JOBS = (f"python3 -c '{SLEEP}' job-a & a=$!; "
              f"python3 -c '{SLEEP}' job-b & b=$!; "
              "echo $a,$b; wait")

# A launcher (argv[0] "torchrun", as the console script shows in ps) that
# starts two ranks, each its own program, and waits for them. argv[1] is
# the interpreter (its own sys.executable is lost with that argv[0]).
LAUNCHER = r"""
import os, sys, time
ranks = []
for r in range(2):
    pid = os.fork()
    if pid == 0:
        os.execv(sys.argv[1], ["python3", "-c", "import time; time.sleep(120)",
                               f"--rank={r}"])
    ranks.append(pid)
print(",".join(str(p) for p in [os.getpid()] + ranks), flush=True)
time.sleep(120)
"""


def gpu(index, util, pids):
    return {"index": index, "util_pct": float(util), "mem_util_pct": float(util) / 2,
            "mem_used_bytes": (1 + 10 * len(pids)) * GIB, "temp_c": 60, "mem_temp_c": 56,
            "power_w": 250.0, "energy_mj_total": 900000000, "fan_pct": None,
            "sm_clock_mhz": 1410, "mem_clock_mhz": 1593, "pstate": 0,
            "clock_event_reasons": [], "pcie_gen": 4, "pcie_width": 16,
            "pcie_tx_bytes_per_s": 1000000, "pcie_rx_bytes_per_s": 1000000,
            "pcie_replay_total": 0, "ecc_sbe_volatile_total": 0, "ecc_dbe_volatile_total": 0,
            "retired_pages_pending": False, "remapped_rows_pending": False,
            "remapped_rows_failure": False,
            "processes": [{"pid": p, "used_bytes": 10 * GIB, "type": "compute"} for p in pids]}


class LiveJobs(E2E):
    def start_jobs(self):
        shell = subprocess.Popen(["bash", "-c", SHELL_JOBS], stdout=subprocess.PIPE,
                                 text=True, start_new_session=True)
        self.children.append(shell)
        self.job_a, self.job_b = [int(x) for x in shell.stdout.readline().split(",")]
        launcher = subprocess.Popen(["torchrun", "-c", LAUNCHER, sys.executable],
                                    executable=sys.executable,
                                    stdout=subprocess.PIPE, text=True, start_new_session=True)
        self.children.append(launcher)
        self.launcher, self.rank0, self.rank1 = [
            int(x) for x in launcher.stdout.readline().split(",")]

    def scenario(self):
        """GPU 0: both shell jobs; GPU 1: rank 0 busy; GPU 2: rank 1 mostly
        waiting (an imbalanced DDP job); GPU 3 idle and empty."""
        header, _ = load_scenario(scenario_4gpu())
        for g in header["gpus"]:
            g["compute_mode"] = "default"
            g["mig_enabled"] = False
            g["persistence_mode"] = True
        header["loop"] = True
        samples = []
        for i in range(10):
            samples.append({"t": T0 + i * 0.1, "host": {}, "processes": [], "events": [],
                            "gpus": [gpu(0, 90, [self.job_a, self.job_b]),
                                     gpu(1, 96, [self.rank0]),
                                     gpu(2, 20, [self.rank1]),
                                     gpu(3, 0, [])]})
        return write_scenario(header, samples, self.tmp.name)

    def test_two_jobs_from_one_shell_are_two_jobs_and_two_ranks_of_a_launcher_one(self):
        self.start_jobs()
        path = self.scenario()
        p = run(["--interval", "100ms", "diagnose", "--duration", "5s", "--json"],
                scenario=path, timeout=60)
        self.assertIn(p.returncode, (0, 1, 2), p.stderr)
        doc = json.loads(p.stdout)
        by_id = {}
        for f in doc["findings"]:
            by_id.setdefault(f["id"], []).append(f)

        # The shell's two jobs share GPU 0: two jobs, each named.
        shared = by_id.get("gpu-shared-contention", [])
        self.assertEqual(len(shared), 1, list(by_id))
        self.assertEqual(shared[0]["gpus"], [0])
        self.assertEqual(shared[0]["title"], "GPU 0 is shared by 2 jobs")
        self.assertEqual(sorted(shared[0]["pids"]), sorted([self.job_a, self.job_b]))

        # The launcher's two ranks are one job, named by its launcher.
        imbalance = by_id.get("gpu-imbalance", [])
        self.assertEqual(len(imbalance), 1, list(by_id))
        self.assertEqual(imbalance[0]["gpus"], [1, 2])
        self.assertEqual(imbalance[0]["pids"][0], self.launcher)
        self.assertEqual(sorted(imbalance[0]["pids"][1:]), sorted([self.rank0, self.rank1]))
        # ...and the launcher is known: its name is read from /proc.
        self.assertIn(f"job under pid {self.launcher} (", imbalance[0]["evidence"])

    def test_ps_tree_shows_the_launcher_job_and_the_shell_jobs_apart(self):
        self.start_jobs()
        p = run(["ps", "--tree", "--json"], scenario=self.scenario(), check=True)
        jobs = json.loads(p.stdout)["jobs"]
        ranks_of = [sorted(r["pid"] for r in j["ranks"]) for j in jobs]
        self.assertIn(sorted([self.rank0, self.rank1]), ranks_of)
        self.assertIn([self.job_a], ranks_of)
        self.assertIn([self.job_b], ranks_of)
        launched = [j for j in jobs if j["launcher"]]
        self.assertEqual([j["launcher"]["pid"] for j in launched], [self.launcher])


if __name__ == "__main__":
    unittest.main()
