"""gpudoctor's RSS and wall time with 0 and with N pods (default 10,000) in
the kubelet's and the runtime's lists (tests/pods/fake_kubelet.py over real
Unix sockets): the pod lists are bounded (src/pods/pods_limits.h), so the
cost of a big node is its lists' size once, not a growing cache."""
import argparse
import json
import os
import select
import signal
import subprocess
import tempfile
import time
import urllib.request
import uuid


def state(n, gpu_uuids):
    pods = []
    for i in range(n):
        pods.append({"namespace": f"ns-{i % 50}", "name": f"pod-{i:05d}",
                     "uid": str(uuid.UUID(int=i + 1)), "sandbox_id": f"{i:064x}",
                     "containers": [{"name": "main", "id": f"{i + 1:064x}",
                                     "devices": [{"resource": "nvidia.com/gpu",
                                                  "ids": [f"{gpu_uuids[i % len(gpu_uuids)]}::{i}"]}]}]})
    return {"allocatable": [{"resource": "nvidia.com/gpu", "ids": gpu_uuids}], "pods": pods}


def start_kubelet(kubelet, directory, doc):
    path = os.path.join(directory, "state.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    sockets = (os.path.join(directory, "kubelet.sock"), os.path.join(directory, "cri.sock"))
    p = subprocess.Popen(["/usr/bin/python3", kubelet, "--state", path, "--pod-resources",
                          sockets[0], "--cri", sockets[1]], stdout=subprocess.PIPE,
                         env=dict(os.environ, TMPDIR=directory), start_new_session=True)
    deadline = time.monotonic() + 120
    buf = b""
    while b"ready" not in buf.splitlines():
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([p.stdout], [], [], left)[0]:
            raise SystemExit("fake kubelet not ready")
        chunk = os.read(p.stdout.fileno(), 4096)
        if not chunk:
            raise SystemExit("fake kubelet exited")
        buf += chunk
    return p, sockets


def hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def one_shot(gd, env, args):
    """Wall seconds and peak RSS (KiB) of one gpudoctor command."""
    t = time.monotonic()
    p = subprocess.Popen([gd] + args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, ru = os.wait4(p.pid, 0)[1:]
    wall = time.monotonic() - t
    out = p.stdout.read()
    return wall, ru.ru_maxrss, out


def serve_hwm(base, env, seconds, port):
    p = subprocess.Popen(base + ["serve", "--listen", f"127.0.0.1:{port}", "--no-db"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(seconds)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
            page = r.read().decode()
        return hwm_kib(p.pid), page.count("gpudoctor_gpu_pod_info{")
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpudoctor")
    ap.add_argument("--fake", required=True)
    ap.add_argument("--pods-lib", required=True)
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--kubelet", required=True)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--serve-seconds", type=float, default=25)
    a = ap.parse_args()
    with open(a.scenario) as f:
        header = json.loads(f.readline())
    gpu_uuids = [g["uuid"] for g in header["gpus"]]
    print(f"{'pods':>6} {'ps wall s':>10} {'ps max RSS MiB':>15} "
          f"{'serve max RSS MiB':>18} {'pod_info series':>16}")
    for n in (0, a.pods):
        with tempfile.TemporaryDirectory() as d:
            kubelet, (pr_sock, cri_sock) = start_kubelet(a.kubelet, d, state(n, gpu_uuids))
            try:
                env = dict(os.environ, FAKE_NVML_SCENARIO=a.scenario,
                           GPUDOCTOR_PODS_LIB=a.pods_lib,
                           GPUDOCTOR_POD_RESOURCES_SOCKET=pr_sock, GPUDOCTOR_CRI_SOCKET=cri_sock)
                base = [a.gpudoctor, "--nvml-lib", a.fake, "--kmsg", "none"]
                wall, rss, out = one_shot(base[0], env, base[1:] + ["ps", "--json", "--serve",
                                                                    "none"])
                json.loads(out)  # a whole reply
                serve_rss, info = serve_hwm(base, env, a.serve_seconds, 19000 + n % 1000)
                print(f"{n:>6} {wall:>10.3f} {rss / 1024:>15.1f} "
                      f"{serve_rss / 1024:>18.1f} {info:>16}", flush=True)
            finally:
                os.killpg(kubelet.pid, signal.SIGTERM)
                kubelet.wait(timeout=30)


if __name__ == "__main__":
    main()
