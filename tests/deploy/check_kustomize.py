#!/usr/bin/env python3
"""check_kustomize.py DEPLOY_DIR [SRC_DIR]: deploy/kubernetes and
deploy/kubernetes/node-problem-detector are kustomize bases that render with
the real kustomize, the one in `kubectl kustomize` (offline, no cluster), to
what the cluster needs: every object in its namespace, serve's DaemonSet with
hostPID and the kubelet's and the container runtime's socket folders mounted
read-only where gpudoctor looks for the sockets (src/pods/pods_library.h),
selectors that meet, and a site's image set by an overlay's `images:`.

Runs with the kubectl on PATH: Debian 12's kubernetes-client (kubectl 1.20,
kustomize v2.0.3) or a newer one (kustomize v5). Fails without kubectl or
python3-yaml: CMakeLists.txt runs it through need_tool.sh."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
DEPLOY = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else \
    os.path.join(HERE, "..", "..", "deploy")
SRC = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else \
    os.path.join(HERE, "..", "..", "src")
BASE = os.path.join(DEPLOY, "kubernetes")
NPD = os.path.join(BASE, "node-problem-detector")
SITE_IMAGE = "registry.example.com/gpu/gpudoctor:1.2.3"

try:
    import yaml
except ImportError as e:
    print(f"FAIL: python3-yaml missing ({e}); install the Debian package 'python3-yaml' "
          "(scripts/install-deps.sh --test)")
    sys.exit(1)

# What a Kustomization of these bases may use: fields every kustomize since
# v2.0 (kubectl 1.14) reads the same way.
KUSTOMIZATION_FIELDS = {"apiVersion", "kind", "namespace", "resources", "images",
                        "commonLabels", "labels"}
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding"}


def kustomize(folder):
    """Renders `folder`; returns (returncode, objects or None, stderr)."""
    p = subprocess.run(["kubectl", "kustomize", folder], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        return p.returncode, None, p.stderr
    return 0, [d for d in yaml.safe_load_all(p.stdout) if d is not None], p.stderr


def render(folder):
    rc, objs, err = kustomize(folder)
    if rc != 0:
        raise AssertionError(f"kubectl kustomize {folder} failed ({rc}): {err}")
    return objs


def overlay(base, body):
    """Renders a site's overlay of `base`: `body` plus the base, named by a
    relative path (kustomize v2 refuses absolute ones) under `resources:`
    (kustomize 2.1+) or, where that fails, `bases:` (Debian 12's kubectl
    1.20). Returns (objects, the field that worked)."""
    tmp = tempfile.mkdtemp(prefix="gd-kustomize-")
    try:
        rel = os.path.relpath(base, tmp)
        errors = []
        for field in ("resources", "bases"):
            with open(os.path.join(tmp, "kustomization.yaml"), "w") as f:
                f.write(f"{field}:\n  - {rel}\n{body}")
            rc, objs, err = kustomize(tmp)
            if rc == 0:
                return objs, field
            errors.append(f"{field}: {err.strip()}")
        raise AssertionError("overlay does not render:\n" + "\n".join(errors))
    finally:
        shutil.rmtree(tmp)


def one(objs, kind):
    found = [o for o in objs if o["kind"] == kind]
    assert len(found) == 1, (kind, [o["kind"] for o in objs])
    return found[0]


def matches(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def socket_paths():
    """The sockets gpudoctor looks for, from the C++ header itself."""
    with open(os.path.join(SRC, "pods", "pods_library.h")) as f:
        text = f.read()
    pr = re.search(r'kPodResourcesSocket\s*=\s*"([^"]+)"', text).group(1)
    cri_block = re.search(r"kCriSockets\s*=\s*\{([^}]*)\}", text).group(1)
    return pr, re.findall(r'"([^"]+)"', cri_block)


def load_kustomization(folder):
    with open(os.path.join(folder, "kustomization.yaml")) as f:
        return yaml.safe_load(f)


class Kustomizations(unittest.TestCase):
    def test_only_portable_fields(self):
        for folder in (BASE, NPD):
            with self.subTest(folder=os.path.relpath(folder, DEPLOY)):
                k = load_kustomization(folder)
                self.assertEqual(k["apiVersion"], "kustomize.config.k8s.io/v1beta1")
                self.assertEqual(k["kind"], "Kustomization")
                self.assertLessEqual(set(k), KUSTOMIZATION_FIELDS)
                self.assertIn("gpudoctor", [i["name"] for i in k["images"]],
                              "no images: entry for `kustomize edit set image gpudoctor=...`")

    def test_base_lists_every_manifest_beside_it(self):
        for folder in (BASE, NPD):
            with self.subTest(folder=os.path.relpath(folder, DEPLOY)):
                listed = set(load_kustomization(folder)["resources"])
                files = {f for f in os.listdir(folder)
                         if f.endswith((".yaml", ".yml")) and f != "kustomization.yaml"}
                self.assertEqual(listed, files)


class ServeBase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.objs = render(BASE)
        cls.ds = one(cls.objs, "DaemonSet")
        cls.pod = cls.ds["spec"]["template"]
        cls.c = cls.pod["spec"]["containers"][0]

    def test_renders_the_serve_objects(self):
        self.assertEqual(sorted(o["kind"] for o in self.objs),
                         sorted(["Namespace", "DaemonSet", "Service", "ServiceMonitor",
                                 "PrometheusRule", "NetworkPolicy"]))

    def test_every_object_lands_in_the_gpudoctor_namespace(self):
        self.assertEqual(one(self.objs, "Namespace")["metadata"]["name"], "gpudoctor")
        for o in self.objs:
            if o["kind"] not in CLUSTER_SCOPED:
                self.assertEqual(o["metadata"].get("namespace"), "gpudoctor", o["kind"])
        # The ServiceMonitor finds the Service in its own namespace: one
        # named elsewhere would break when a site moves both.
        sm = one(self.objs, "ServiceMonitor")
        self.assertNotIn("namespaceSelector", sm["spec"])

    def test_host_pids(self):
        self.assertIs(self.pod["spec"].get("hostPID"), True)

    def test_sockets_folders_mounted_read_only_where_gpudoctor_looks(self):
        volumes = {v["name"]: v for v in self.pod["spec"]["volumes"]}
        mounts = {m["mountPath"]: m for m in self.c["volumeMounts"]}
        pod_resources, cri_sockets = socket_paths()

        def mounted_folder(socket):
            m = mounts.get(os.path.dirname(socket))
            if m is None:
                return None
            host = volumes[m["name"]].get("hostPath", {})
            self.assertEqual(host.get("path"), m["mountPath"], "host and pod paths differ")
            self.assertIs(m.get("readOnly"), True, m)
            return m

        self.assertEqual(pod_resources, "/var/lib/kubelet/pod-resources/kubelet.sock")
        self.assertTrue(mounted_folder(pod_resources), "pod-resources not mounted")
        self.assertIn("/run/containerd/containerd.sock", cri_sockets)
        self.assertTrue(mounted_folder("/run/containerd/containerd.sock"),
                        "containerd's socket folder not mounted")
        # An override must name a mounted socket, and not turn the lookup off.
        env = {e["name"]: e.get("value") for e in self.c.get("env", [])}
        for name in ("GPUDOCTOR_POD_RESOURCES_SOCKET", "GPUDOCTOR_CRI_SOCKET"):
            if name in env:
                self.assertTrue(mounted_folder(env[name]), (name, env[name]))

    def test_every_host_path_is_read_only(self):
        host = {v["name"] for v in self.pod["spec"]["volumes"] if "hostPath" in v}
        self.assertGreaterEqual(len(host), 2)
        for m in self.c["volumeMounts"]:
            if m["name"] in host:
                self.assertIs(m.get("readOnly"), True, m)

    def test_base_image_is_the_dockerfiles(self):
        self.assertEqual(self.c["image"], "gpudoctor:latest")

    def test_selectors_reach_the_daemonset_pods(self):
        labels = self.pod["metadata"]["labels"]
        self.assertTrue(matches(self.ds["spec"]["selector"]["matchLabels"], labels))
        svc = one(self.objs, "Service")
        self.assertTrue(matches(svc["spec"]["selector"], labels), svc["spec"]["selector"])
        sm = one(self.objs, "ServiceMonitor")
        self.assertTrue(matches(sm["spec"]["selector"]["matchLabels"], svc["metadata"]["labels"]))
        self.assertTrue(matches(sm["spec"]["selector"]["matchLabels"], labels))
        np = one(self.objs, "NetworkPolicy")
        self.assertTrue(matches(np["spec"]["podSelector"]["matchLabels"], labels))
        ports = {p["name"] for p in self.c["ports"]}
        for p in svc["spec"]["ports"]:
            self.assertIn(p["targetPort"], ports)
        for ep in sm["spec"]["endpoints"]:
            self.assertIn(ep["port"], {p["name"] for p in svc["spec"]["ports"]})


class SiteOverlay(unittest.TestCase):
    """A site's own kustomization over the base (docs/kubernetes.md)."""

    def test_images_entry_sets_the_image(self):
        objs, _ = overlay(BASE, "images:\n  - name: gpudoctor\n"
                                "    newName: registry.example.com/gpu/gpudoctor\n"
                                "    newTag: \"1.2.3\"\n")
        c = one(objs, "DaemonSet")["spec"]["template"]["spec"]["containers"][0]
        self.assertEqual(c["image"], SITE_IMAGE)
        for o in objs:
            if o["kind"] not in CLUSTER_SCOPED:
                self.assertEqual(o["metadata"].get("namespace"), "gpudoctor", o["kind"])

    def test_without_the_prometheus_operator(self):
        _, field = overlay(BASE, "")
        if field == "bases":
            self.skipTest("kustomize v2 (kubectl 1.20) has no `patches:` nor `$patch: delete`")
        delete = "$patch: delete\napiVersion: monitoring.coreos.com/v1\nkind: {}\n" \
                 "metadata:\n  name: gpudoctor\n  namespace: gpudoctor\n"
        tmp = tempfile.mkdtemp(prefix="gd-kustomize-")
        try:
            with open(os.path.join(tmp, "kustomization.yaml"), "w") as f:
                f.write(f"resources:\n  - {os.path.relpath(BASE, tmp)}\n"
                        "patches:\n  - path: no-servicemonitor.yaml\n"
                        "  - path: no-prometheusrule.yaml\n")
            # One file each: kustomize v5.5 panics on two deletions in one.
            for kind in ("ServiceMonitor", "PrometheusRule"):
                with open(os.path.join(tmp, f"no-{kind.lower()}.yaml"), "w") as f:
                    f.write(delete.format(kind))
            objs = render(tmp)
        finally:
            shutil.rmtree(tmp)
        self.assertEqual(sorted(o["kind"] for o in objs),
                         ["DaemonSet", "Namespace", "NetworkPolicy", "Service"])


class NodeProblemDetectorBase(unittest.TestCase):
    def test_renders_in_kube_system(self):
        objs = render(NPD)
        self.assertEqual(sorted(o["kind"] for o in objs),
                         ["ClusterRoleBinding", "ConfigMap", "DaemonSet", "ServiceAccount"])
        for o in objs:
            if o["kind"] not in CLUSTER_SCOPED:
                self.assertEqual(o["metadata"].get("namespace"), "kube-system", o["kind"])
        binding = one(objs, "ClusterRoleBinding")
        self.assertEqual([(s["name"], s["namespace"]) for s in binding["subjects"]],
                         [("gpudoctor-npd", "kube-system")])
        ds = one(objs, "DaemonSet")["spec"]["template"]
        self.assertTrue(matches(one(objs, "DaemonSet")["spec"]["selector"]["matchLabels"],
                                ds["metadata"]["labels"]))
        self.assertEqual(ds["spec"]["initContainers"][0]["image"], "gpudoctor:latest")

    def test_images_entry_sets_the_bundle_image_only(self):
        objs, _ = overlay(NPD, "images:\n  - name: gpudoctor\n"
                               "    newName: registry.example.com/gpu/gpudoctor\n"
                               "    newTag: \"1.2.3\"\n")
        spec = one(objs, "DaemonSet")["spec"]["template"]["spec"]
        self.assertEqual(spec["initContainers"][0]["image"], SITE_IMAGE)
        self.assertTrue(spec["containers"][0]["image"].startswith(
            "registry.k8s.io/node-problem-detector/node-problem-detector:"))


if __name__ == "__main__":
    if shutil.which("kubectl") is None:
        print("FAIL: kubectl not found; install the Debian package 'kubernetes-client' "
              "(scripts/install-deps.sh --test)")
        sys.exit(1)
    unittest.main(verbosity=2)
