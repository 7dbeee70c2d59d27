"""Pods in diagnose and kill, end to end.

`diagnose --from` a trace of a Kubernetes node over ten minutes: GPU 0 busy
with pod ml/train-0's process, GPU 1 allocated by the kubelet to pod
infer/idle, which runs nothing on it, GPU 2 held idle by a process of a
deleted pod. And `kill --dry-run` on a live node (the fake kubelet of
test_pods.py): the plan names each target's pod and says the kubelet
restarts a container whose process ends."""
import json
import os
import subprocess
import unittest

from gd_e2e import E2E, GPUDOCTOR, NO_DRIVER, run, write_scenario
from test_diagnose import GIB, gpu, header_with, proc, sample
from test_export import STORE_FILL
from test_pods import PodsCase

IDLE_ALLOCATED = "gpu-idle-allocated"
UID = "0b1c2d3e-0000-4000-8000-{:012d}"


def pod(n, namespace, name, deleted=False):
    return {"uid": UID.format(n), "namespace": namespace, "name": name,
            "container": "main", "deleted": deleted}


def in_pod(p, the_pod):
    p = dict(p)
    p["pod"] = the_pod
    return p


class PodTrace(E2E):
    """The trace of the module's docstring."""

    def trace(self, allocations=True):
        header = header_with(3)
        uuids = [g["uuid"] for g in header["gpus"]]
        samples = []
        for i in range(61):  # one every 10 s: ten minutes
            gpus = [gpu(0, 95, [(7000, 20 * GIB)]), gpu(1, 0),
                    gpu(2, 0, [(7002, 8 * GIB)])]
            procs = [in_pod(proc(7000, 6000), pod(1, "ml", "train-0")),
                     in_pod(proc(7002, 6002, cpu=0.0, state="S"),
                            pod(3, "ml", "notebook", deleted=True))]
            s = sample(i, gpus, procs, interval=10.0)
            if allocations:
                s["pod_allocations"] = [
                    {"gpu": 0, "uuid": uuids[0], "resource": "nvidia.com/gpu",
                     "namespace": "ml", "name": "train-0", "container": "main"},
                    {"gpu": 1, "uuid": uuids[1], "resource": "nvidia.com/gpu",
                     "namespace": "infer", "name": "idle", "container": "main"}]
            samples.append(s)
        return write_scenario(header, samples, self.tmp.name)

    def findings(self, trace):
        p = run(["diagnose", "--from", trace, "--json"], nvml=NO_DRIVER)
        self.assertIn(p.returncode, (0, 1, 2), p.stderr)
        doc = json.loads(p.stdout)
        return {tuple(f["gpus"]): f for f in doc["findings"] if f["id"] == IDLE_ALLOCATED}


class PodIdleAllocated(PodTrace):

    def test_a_gpu_allocated_to_a_pod_that_runs_nothing_names_the_pod(self):
        found = self.findings(self.trace())
        self.assertIn((1,), found, found)
        f = found[(1,)]
        self.assertEqual(f["severity"], "info")
        self.assertEqual(f["pids"], [])
        self.assertIn("pod infer/idle, which ran no process on it", f["evidence"])
        self.assertIn("kubectl delete pod -n infer idle", f["action"])
        self.assertNotIn((0,), found, "GPU 0 is busy")

    def test_a_holder_is_named_with_its_deleted_pod(self):
        found = self.findings(self.trace())
        self.assertIn((2,), found, found)
        f = found[(2,)]
        self.assertEqual(f["pids"], [7002])
        self.assertIn("pod ml/notebook/main (deleted)", f["evidence"])

    def test_text_report_names_the_pod(self):
        p = run(["diagnose", "--from", self.trace()], nvml=NO_DRIVER)
        self.assertIn("infer/idle", p.stdout, p.stdout)

    def test_from_serves_history(self):
        """The same window written into a history database (the store's
        codec, as serve writes it) and exported back: the kubelet's
        allocations and the pods come back, so does the finding."""
        db = os.path.join(self.tmp.name, "history.db")
        subprocess.run([STORE_FILL, "--db", db, "--trace", self.trace()], check=True,
                       capture_output=True, timeout=120)
        exported = os.path.join(self.tmp.name, "exported.jsonl")
        p = subprocess.run([GPUDOCTOR, "export", "--db", db, "--since", "0", "--output",
                            exported], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        found = self.findings(exported)
        self.assertIn((1,), found, found)
        self.assertIn("pod infer/idle, which ran no process on it", found[(1,)]["evidence"])
        self.assertIn("pod ml/notebook/main (deleted)", found[(2,)]["evidence"])

    def test_without_the_kubelets_list_no_pod_finding(self):
        found = self.findings(self.trace(allocations=False))
        self.assertNotIn((1,), found, found)
        self.assertIn((2,), found, "the holder's finding does not need the kubelet")


class PodReport(PodTrace):
    """report --by pod / --by namespace over the same trace: each pod's
    GPU-hours are its own and the rows add up to the node's."""

    def report(self, by):
        p = run(["report", "--from", self.trace(), "--by", by, "--json"], nvml=NO_DRIVER)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stdout)
        self.assertEqual(doc["by"], by)
        return {g["label"]: g for g in doc["groups"]}, doc

    def test_by_pod(self):
        groups, doc = self.report("pod")
        self.assertIn("ml/train-0", groups, groups.keys())
        self.assertIn("ml/notebook", groups, groups.keys())
        # Ten minutes, one GPU each.
        for label in ("ml/train-0", "ml/notebook"):
            self.assertAlmostEqual(groups[label]["gpu_hours_held"], 600 / 3600, delta=0.002)
        total = sum(g["gpu_hours_held"] for g in groups.values())
        self.assertAlmostEqual(total, doc["node"]["gpu_hours_held"],
                               delta=doc["node"]["gpu_hours_held"] * 0.01)

    def test_by_namespace(self):
        groups, _ = self.report("namespace")
        self.assertEqual(set(groups), {"ml"}, groups.keys())
        self.assertAlmostEqual(groups["ml"]["gpu_hours_held"], 1200 / 3600, delta=0.004)

    def test_text_table_names_the_pods(self):
        p = run(["report", "--from", self.trace(), "--by", "pod"], nvml=NO_DRIVER)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("ml/train-0", p.stdout)
        self.assertIn("ml/notebook", p.stdout)


class PodStatus(PodsCase):
    def test_each_gpu_lists_the_pods_the_kubelet_gave_it(self):
        text = self.gd(["status", "--wide"]).stdout
        blocks = {}
        for block in text.split("\nGPU ")[1:]:
            blocks[int(block.split()[0])] = block
        self.assertIn("pods: ml/train-0/main (replica 0)  ml/train-1/main (replica 1)",
                      blocks[0], text)
        self.assertIn("pods: infer/serve-0/server\n", blocks[1], text)
        self.assertNotIn("pods:", blocks[2], text)

    def test_json_has_the_allocations(self):
        lines = self.gd(["status", "--json"]).stdout.splitlines()
        self.assertEqual(len(lines), 2, lines)  # the header, one sample
        got = sorted((a["gpu"], a["namespace"], a["name"], a.get("replica"))
                     for a in json.loads(lines[1])["pod_allocations"])
        self.assertEqual(got, [(0, "ml", "train-0", 0), (0, "ml", "train-1", 1),
                               (1, "infer", "serve-0", None)])

    def test_without_the_kubelet_no_pods_line(self):
        self.assertNotIn("pods:", self.gd(["status"], sockets=False).stdout)


class PodKillPlan(PodsCase):
    def test_the_dry_run_plan_names_the_pod_and_the_restart(self):
        p = run(["kill", "--dry-run", str(self.train0.pid)], scenario=self.scenario,
                env=self.env())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"pod: {self.train0.text()}", p.stdout, p.stdout)
        self.assertIn("the kubelet restarts a pod's container", p.stdout, p.stdout)

    def test_a_plain_process_has_no_pod_line(self):
        p = run(["kill", "--dry-run", str(self.plain)], scenario=self.scenario,
                env=self.env())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("pod:", p.stdout, p.stdout)
        self.assertNotIn("kubelet", p.stdout, p.stdout)


if __name__ == "__main__":
    unittest.main()
