#!/usr/bin/env python3
"""check_manifests.py DEPLOY_DIR: the deployment files are what their
readers expect. Every YAML file parses; the Kubernetes objects fit together
(DaemonSet, Service, ServiceMonitor, PrometheusRule); the Grafana dashboard
is valid and consistent; rules and dashboard only use gpudoctor's and
dcgm-exporter's metric names. Exit 77 (skipped) without python3-yaml."""
import glob
import json
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import promql_names  # noqa: E402

DEPLOY = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else \
    os.path.join(os.path.dirname(__file__), "..", "..", "deploy")
yaml = promql_names.yaml


def load_all(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def k8s_objects():
    objs = {}
    for path in sorted(glob.glob(os.path.join(DEPLOY, "kubernetes", "*.yaml"))):
        if os.path.basename(path) == "kustomization.yaml":  # kustomize's, not the cluster's
            continue
        for d in load_all(path):
            objs[d["kind"]] = d
    return objs


class YamlFiles(unittest.TestCase):
    def test_every_yaml_file_parses(self):
        files = glob.glob(os.path.join(DEPLOY, "**", "*.yml"), recursive=True) + \
            glob.glob(os.path.join(DEPLOY, "**", "*.yaml"), recursive=True)
        self.assertGreaterEqual(len(files), 8, files)
        for path in files:
            with self.subTest(path=os.path.relpath(path, DEPLOY)):
                docs = load_all(path)
                self.assertTrue(docs, "empty file")


class Kubernetes(unittest.TestCase):
    def setUp(self):
        self.o = k8s_objects()
        for kind in ("Namespace", "DaemonSet", "Service", "ServiceMonitor", "PrometheusRule"):
            self.assertIn(kind, self.o)
        self.ds = self.o["DaemonSet"]
        self.pod = self.ds["spec"]["template"]["spec"]
        self.c = self.pod["containers"][0]

    def test_one_namespace(self):
        ns = self.o["Namespace"]["metadata"]["name"]
        for kind, obj in self.o.items():
            if kind != "Namespace":
                self.assertEqual(obj["metadata"]["namespace"], ns, kind)

    def test_daemonset_sees_host_pids_and_all_gpus(self):
        self.assertIs(self.pod.get("hostPID"), True)
        self.assertEqual(self.pod.get("runtimeClassName"), "nvidia")
        self.assertTrue(self.pod.get("nodeSelector"), "must run on GPU nodes only")
        env = {e["name"]: e.get("value") for e in self.c.get("env", [])}
        self.assertEqual(env.get("NVIDIA_VISIBLE_DEVICES"), "all")
        limits = self.c["resources"].get("limits", {})
        self.assertNotIn("nvidia.com/gpu", limits, "a monitor must not take a GPU from the scheduler")

    def test_daemonset_mounts_the_pod_sockets_read_only(self):
        # Pod names: the kubelet's pod-resources socket and containerd's CRI
        # socket (src/pods/pods_library.h), their folders mounted at the
        # host's paths; tests/deploy/check_kustomize.py checks the render.
        volumes = {v["name"]: v for v in self.pod["volumes"]}
        mounts = {m["mountPath"]: m for m in self.c["volumeMounts"]}
        for m in self.c["volumeMounts"]:
            self.assertIn(m["name"], volumes, "volumeMount names no volume")
        for path in ("/var/lib/kubelet/pod-resources", "/run/containerd"):
            self.assertIn(path, mounts)
            self.assertIs(mounts[path].get("readOnly"), True, path)
            host = volumes[mounts[path]["name"]]["hostPath"]
            self.assertEqual(host["path"], path)
            self.assertIn(host.get("type"), ("Directory", "DirectoryOrCreate"), path)
        for m in self.c["volumeMounts"]:
            if "hostPath" in volumes[m["name"]]:
                self.assertIs(m.get("readOnly"), True, m["mountPath"])

    def test_daemonset_selector_matches_its_pods(self):
        labels = self.ds["spec"]["template"]["metadata"]["labels"]
        for k, v in self.ds["spec"]["selector"]["matchLabels"].items():
            self.assertEqual(labels.get(k), v)

    def test_container_serves_on_its_port_with_probes(self):
        args = self.c["args"]
        self.assertEqual(args[0], "serve")
        listen = [a for a in args if a.startswith("--listen")]
        self.assertEqual(len(listen), 1, args)
        port = int(re.search(r":(\d+)$", listen[0]).group(1))
        ports = {p["name"]: p["containerPort"] for p in self.c["ports"]}
        self.assertIn(port, ports.values(), "--listen port is not a containerPort")
        self.assertTrue(listen[0].split("=")[-1].startswith("0.0.0.0:"),
                        "must listen beyond loopback to be scraped")
        for probe in ("livenessProbe", "readinessProbe"):
            http = self.c[probe]["httpGet"]
            self.assertEqual(http["path"], "/healthz")
            self.assertIn(http["port"], ports)

    def test_container_is_locked_down(self):
        sc = self.c["securityContext"]
        self.assertIs(sc["readOnlyRootFilesystem"], True)
        self.assertIs(sc["allowPrivilegeEscalation"], False)
        self.assertIs(sc.get("privileged", False), False)
        self.assertEqual(sc["capabilities"]["drop"], ["ALL"])
        self.assertIn("requests", self.c["resources"])
        self.assertIn("limits", self.c["resources"])

    def test_service_and_servicemonitor_reach_the_pods(self):
        svc = self.o["Service"]
        pod_labels = self.ds["spec"]["template"]["metadata"]["labels"]
        for k, v in svc["spec"]["selector"].items():
            self.assertEqual(pod_labels.get(k), v)
        port_names = {p["name"] for p in self.c["ports"]}
        svc_ports = {p["name"] for p in svc["spec"]["ports"]}
        for p in svc["spec"]["ports"]:
            self.assertIn(p["targetPort"], port_names)
        sm = self.o["ServiceMonitor"]
        for k, v in sm["spec"]["selector"]["matchLabels"].items():
            self.assertEqual(svc["metadata"]["labels"].get(k), v)
        for ep in sm["spec"]["endpoints"]:
            self.assertIn(ep["port"], svc_ports)
            # the process series' own pod labels, not serve's pod's
            self.assertIs(ep.get("honorLabels"), True, ep)
        # the rules' GpudoctorTargetDown selects job=~"gpudoctor.*"
        job = svc["metadata"]["labels"][sm["spec"]["jobLabel"]]
        self.assertTrue(job.startswith("gpudoctor"), job)

    def test_prometheusrule_is_the_rules_file(self):
        with open(os.path.join(DEPLOY, "prometheus", "gpudoctor-rules.yml")) as f:
            rules = yaml.safe_load(f)
        self.assertEqual(self.o["PrometheusRule"]["spec"], rules,
                         "deploy/kubernetes/prometheusrule.yaml differs from gpudoctor-rules.yml")


class NodeProblemDetector(unittest.TestCase):
    """deploy/kubernetes/node-problem-detector: the detector's container
    finds the plugin config where its flag says, and gpudoctor where the
    config's rules say (the init container fills that volume from the
    gpudoctor image's /opt/gpudoctor); it sees the GPUs and the kernel log.
    What the rules answer is tests/e2e/test_check.py's NodeProblemDetector."""

    def setUp(self):
        d = os.path.join(DEPLOY, "kubernetes", "node-problem-detector")
        self.o = {x["kind"]: x for x in load_all(os.path.join(d, "daemonset.yaml"))}
        with open(os.path.join(d, "gpudoctor-check.json")) as f:
            self.config = json.load(f)
        self.pod = self.o["DaemonSet"]["spec"]["template"]["spec"]
        self.c = self.pod["containers"][0]
        self.mounts = {m["name"]: m["mountPath"] for m in self.c["volumeMounts"]}
        self.volumes = {v["name"]: v for v in self.pod["volumes"]}

    def test_configmap_holds_the_config_file(self):
        data = self.o["ConfigMap"]["data"]
        self.assertEqual(json.loads(data["gpudoctor-check.json"]), self.config)

    def test_detector_reads_the_config_from_the_configmap(self):
        flag = [a for a in self.c["command"] if a.startswith("--config.custom-plugin-monitor=")]
        self.assertEqual(len(flag), 1, self.c["command"])
        path = flag[0].split("=", 1)[1]
        folder, name = os.path.split(path)
        vol = [n for n, m in self.mounts.items() if m == folder]
        self.assertEqual(len(vol), 1, (folder, self.mounts))
        self.assertEqual(self.volumes[vol[0]]["configMap"]["name"],
                         self.o["ConfigMap"]["metadata"]["name"])
        self.assertIn(name, self.o["ConfigMap"]["data"])

    def test_rules_run_the_binary_the_init_container_copies(self):
        init = self.pod["initContainers"][0]
        self.assertTrue(init["image"].startswith("gpudoctor:"), init["image"])
        self.assertEqual(init["command"][:2], ["cp", "-a"])
        src, dest = init["command"][2:]
        self.assertEqual(src, "/opt/gpudoctor/.")
        with open(os.path.join(DEPLOY, "docker", "Dockerfile")) as f:
            self.assertIn("-C /opt/gpudoctor --strip-components=1", f.read())
        bundle_vol = [m["name"] for m in init["volumeMounts"] if m["mountPath"] == dest.rstrip("/")]
        self.assertEqual(len(bundle_vol), 1)
        self.assertIn("emptyDir", self.volumes[bundle_vol[0]])
        mount = self.mounts[bundle_vol[0]]
        for rule in self.config["rules"]:
            self.assertTrue(rule["path"].startswith(mount + "/"), rule["path"])
            self.assertEqual(os.path.relpath(rule["path"], mount), "bin/gpudoctor")

    def test_detector_sees_the_gpus_and_the_kernel_log(self):
        self.assertEqual(self.pod.get("runtimeClassName"), "nvidia")
        env = {e["name"]: e.get("value") for e in self.c.get("env", [])}
        self.assertEqual(env.get("NVIDIA_VISIBLE_DEVICES"), "all")
        self.assertNotIn("nvidia.com/gpu", self.c["resources"].get("limits", {}))
        self.assertEqual(self.mounts.get("kmsg"), "/dev/kmsg")
        self.assertEqual(self.volumes["kmsg"]["hostPath"]["path"], "/dev/kmsg")
        self.assertIs(self.c["securityContext"].get("privileged"), True)  # reads /dev/kmsg

    def test_service_account_is_bound_to_the_detectors_role(self):
        sa = self.o["ServiceAccount"]["metadata"]
        self.assertEqual(self.pod["serviceAccountName"], sa["name"])
        binding = self.o["ClusterRoleBinding"]
        self.assertEqual(binding["roleRef"]["name"], "system:node-problem-detector")
        self.assertIn({"kind": "ServiceAccount", "name": sa["name"], "namespace": sa["namespace"]},
                      binding["subjects"])
        for kind in ("ConfigMap", "DaemonSet"):
            self.assertEqual(self.o[kind]["metadata"]["namespace"], sa["namespace"])


class NetworkPolicy(unittest.TestCase):
    """Only Prometheus reaches the port: the pods' data (process names,
    users, command lines) is not for every pod in the cluster."""

    def setUp(self):
        o = k8s_objects()
        self.assertIn("NetworkPolicy", o, "deploy/kubernetes has no NetworkPolicy")
        self.np = o["NetworkPolicy"]["spec"]
        self.pod = o["DaemonSet"]["spec"]["template"]
        self.c = self.pod["spec"]["containers"][0]

    def test_selects_the_daemonset_pods(self):
        labels = self.pod["metadata"]["labels"]
        selector = self.np["podSelector"]["matchLabels"]
        self.assertTrue(selector)
        for k, v in selector.items():
            self.assertEqual(labels.get(k), v)
        self.assertIsNot(self.pod["spec"].get("hostNetwork"), True,
                         "a NetworkPolicy does not apply to host-network pods")

    def test_admits_only_prometheus_pods_to_the_metrics_port(self):
        self.assertEqual(self.np["policyTypes"], ["Ingress"])
        self.assertEqual(len(self.np["ingress"]), 1, "one rule: Prometheus")
        rule = self.np["ingress"][0]
        ports = {p["name"]: p["containerPort"] for p in self.c["ports"]}
        for p in rule["ports"]:
            self.assertTrue(p["port"] in ports or p["port"] in ports.values(), p)
        self.assertTrue(rule["from"], "an empty 'from' admits everyone")
        for peer in rule["from"]:
            self.assertNotIn("ipBlock", peer)
            ns = peer.get("namespaceSelector", {}).get("matchLabels", {})
            pods = peer.get("podSelector", {}).get("matchLabels", {})
            # Both, in one peer: a namespace alone admits all its pods, a
            # pod selector alone only looks in gpudoctor's own namespace.
            self.assertIn("kubernetes.io/metadata.name", ns, peer)
            self.assertIn("prometheus", " ".join(pods.values()), peer)


class PrometheusConfigs(unittest.TestCase):
    """What promtool cannot check here: Debian's promtool has no Kubernetes
    discovery, and no promtool knows what the DaemonSet is called."""

    def load(self, name):
        with open(os.path.join(DEPLOY, "prometheus", name)) as f:
            return yaml.safe_load(f)

    def test_jobs_are_named_for_the_rules(self):
        for name in ("scrape-config.yml", "scrape-config-kubernetes.yml"):
            cfg = self.load(name)
            self.assertEqual(cfg["rule_files"], ["gpudoctor-rules.yml"], name)
            for job in cfg["scrape_configs"]:
                self.assertTrue(job["job_name"].startswith("gpudoctor"), job["job_name"])

    def test_kubernetes_discovery_keeps_the_daemonset_pods(self):
        pod = k8s_objects()["DaemonSet"]["spec"]["template"]
        labels = pod["metadata"]["labels"]
        port_names = {p["name"] for c in pod["spec"]["containers"] for p in c["ports"]}
        svc = k8s_objects()["Service"]
        jobs = self.load("scrape-config-kubernetes.yml")["scrape_configs"]
        self.assertEqual(len(jobs), 2)
        for job in jobs:
            sd = job["kubernetes_sd_configs"][0]
            self.assertEqual(sd["namespaces"]["names"], [svc["metadata"]["namespace"]])
            keeps = [r for r in job["relabel_configs"] if r.get("action") == "keep"]
            self.assertEqual(len(keeps), 2, job["job_name"])
            for r in keeps:
                src = r["source_labels"][0]
                if src == "__meta_kubernetes_pod_label_app_kubernetes_io_name":
                    self.assertRegex(labels["app.kubernetes.io/name"], f"^(?:{r['regex']})$")
                elif src == "__meta_kubernetes_service_name":
                    self.assertRegex(svc["metadata"]["name"], f"^(?:{r['regex']})$")
                else:
                    self.assertIn(src, ("__meta_kubernetes_pod_container_port_name",
                                        "__meta_kubernetes_endpoint_port_name"))
                    self.assertTrue(any(re.fullmatch(r["regex"], n) for n in port_names))


class Dashboard(unittest.TestCase):
    def setUp(self):
        self.path = os.path.join(DEPLOY, "grafana", "gpudoctor-dashboard.json")
        with open(self.path) as f:
            self.d = json.load(f)
        self.vars = {v["name"]: v for v in self.d["templating"]["list"]}

    def panels(self):
        out = []
        stack = list(self.d["panels"])
        while stack:
            p = stack.pop(0)
            out.append(p)
            stack.extend(p.get("panels", []))
        return out

    def test_has_the_variables_and_uses_the_datasource_variable(self):
        self.assertEqual(self.vars["datasource"]["type"], "datasource")
        self.assertEqual(self.vars["datasource"]["query"], "prometheus")
        for name in ("Hostname", "gpu", "instance"):
            self.assertEqual(self.vars[name]["datasource"]["uid"], "${datasource}")
        for p in self.panels():
            if p["type"] == "row":
                continue
            self.assertEqual(p["datasource"]["uid"], "${datasource}", p["title"])
            for t in p["targets"]:
                self.assertEqual(t["datasource"]["uid"], "${datasource}", p["title"])

    def test_panel_ids_unique_and_layout_does_not_overlap(self):
        ids = [p["id"] for p in self.panels()]
        self.assertEqual(len(ids), len(set(ids)))
        cells = set()
        for p in self.panels():
            g = p["gridPos"]
            self.assertLessEqual(g["x"] + g["w"], 24, p["title"])
            for x in range(g["x"], g["x"] + g["w"]):
                for y in range(g["y"], g["y"] + g["h"]):
                    self.assertNotIn((x, y), cells, f"panel '{p['title']}' overlaps another")
                    cells.add((x, y))

    def test_covers_what_an_operator_looks_at(self):
        names = set()
        for _, expr in promql_names.dashboard_exprs(self.path):
            names |= promql_names.metric_names(expr)
        for must in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_GPU_TEMP",
                     "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_SM_CLOCK", "gpudoctor_clock_event_reason",
                     "gpudoctor_process_gpu_memory_bytes", "gpudoctor_finding"):
            self.assertIn(must, names)
        types = {p["type"] for p in self.panels()}
        self.assertIn("table", types)

    def test_variables_used_are_defined(self):
        builtin = {"__rate_interval", "__interval", "__range"}
        for where, expr in promql_names.dashboard_exprs(self.path):
            for v in re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", expr):
                self.assertTrue(v in self.vars or v in builtin, f"{where}: ${v} undefined")


class MetricNames(unittest.TestCase):
    """Static check; tests/deploy/check_metric_names.py checks against a live /metrics."""

    def test_rules_and_dashboard_use_known_families(self):
        used = promql_names.rule_exprs(os.path.join(DEPLOY, "prometheus", "gpudoctor-rules.yml"))
        used += promql_names.dashboard_exprs(os.path.join(DEPLOY, "grafana", "gpudoctor-dashboard.json"))
        self.assertGreater(len(used), 20)
        for where, expr in used:
            names = promql_names.metric_names(expr)
            self.assertTrue(names, f"{where}: no metric in {expr!r}")
            for n in names:
                ok = n.startswith(("DCGM_FI_", "gpudoctor_")) or n in promql_names.PROMETHEUS_SYNTHETIC
                self.assertTrue(ok, f"{where}: unknown metric {n!r} in {expr!r}")

    def test_scanner(self):
        f = promql_names.metric_names
        self.assertEqual(f('sum by (gpu) (rate(a_b{x="y z"}[5m])) / on(gpu) group_left(UUID) c'),
                         {"a_b", "c"})
        self.assertEqual(f('DCGM_X{Hostname=~"$Hostname"} > 0 and changes(DCGM_X[15m]) > 0'), {"DCGM_X"})
        self.assertEqual(f('label_values(up{job="x"}, instance)'), {"up"})
        self.assertEqual(f('count(foo == 0) or vector(0)'), {"foo"})


if __name__ == "__main__":
    if yaml is None:
        print(f"SKIP: python3-yaml missing ({promql_names.import_yaml_error}); apt install python3-yaml")
        sys.exit(77)
    unittest.main(verbosity=2)
