"""gpudoctor against a real Slurm (tests/e2e/gd_slurm.py: munged, slurmctld
and slurmd as root with a private slurm.conf and fake GPUs)."""
import os
import unittest

from gd_slurm import SlurmCluster, node_reason


class SlurmCase(unittest.TestCase):
    """A test with a cluster started before it and stopped after it, even
    when it fails."""

    cluster_args = {}

    def setUp(self):
        self.slurm = SlurmCluster(**self.cluster_args)
        self.slurm.__enter__()
        self.addCleanup(self.slurm.stop)


class HealthyNode(SlurmCase):
    def test_jobs_run_and_see_their_gpus(self):
        job = self.slurm.sbatch("--gres=gpu:2", "--wrap",
                                "echo GPUS=$SLURM_JOB_GPUS CVD=$CUDA_VISIBLE_DEVICES")
        fields = self.slurm.wait_job(job, "COMPLETED")
        self.assertEqual(fields["ExitCode"], "0:0")
        self.assertEqual(fields["NodeList"], self.slurm.node)
        out = self.slurm.job_output(job)
        self.assertIn("GPUS=0,1", out)
        self.assertIn("CVD=0,1", out)
        # A second job after the first: the node went back to idle.
        job = self.slurm.sbatch("--wrap", "true")
        self.slurm.wait_job(job, "COMPLETED")

    def test_operator_drain_shows_in_show_node(self):
        s = self.slurm
        s.scontrol("update", f"nodename={s.node}", "state=drain",
                   "reason=operator: fan swap, ticket=42")
        fields = s.wait_node(lambda f: "DRAIN" in f.get("State", ""), "drained", timeout=30)
        self.assertEqual(node_reason(fields), "operator: fan swap, ticket=42")
        # A drained node runs no new job: it stays pending.
        job = s.sbatch("--wrap", "true")
        fields = s.wait_job(job, "PENDING")
        s.scontrol("update", f"nodename={s.node}", "state=resume")
        s.wait_job(job, "COMPLETED")

    def test_daemons_listen_on_loopback_only(self):
        # Checked by the fixture at start; asserted here so it is a test.
        from gd_slurm import LOOPBACK_HEX, listening_sockets
        listening = listening_sockets()
        for port in (self.slurm.ctld_port, self.slurm.slurmd_port):
            self.assertTrue(listening.get(port))
            self.assertLessEqual(listening[port], LOOPBACK_HEX)


if __name__ == "__main__":
    unittest.main()
