#!/usr/bin/env python3
"""check_metric_names.py DEPLOY_DIR GPUDOCTOR FAKE_NVML SCENARIO

Every metric the alert rules and the Grafana dashboard use is on the
/metrics page of a live `gpudoctor serve` (on the fake NVML replaying
SCENARIO, GPUs 0-2 used by this script's own live process and GPU 3's
memory held by a pid that does not exist, so that a finding is exported). A renamed or dropped family fails here, before a
dashboard goes blank in production. Exit 77 (skipped) without python3-yaml."""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import promql_names  # noqa: E402

STARTUP_S = 30   # first sample and diagnosis on a loaded CI machine
FINDING_S = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unused_pid():
    pid_max = int(open("/proc/sys/kernel/pid_max").read())
    return next(p for p in range(pid_max - 1, 1, -1) if not os.path.exists(f"/proc/{p}"))


def get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.read().decode()


def families(page):
    names = set()
    for line in page.splitlines():
        if line.startswith("# TYPE "):
            names.add(line.split()[2])
        elif line and not line.startswith("#"):
            names.add(line.split("{")[0].split(" ")[0])
    return names


def main():
    deploy, gpudoctor, fake, scenario = sys.argv[1:5]
    if promql_names.yaml is None:
        print(f"SKIP: python3-yaml missing ({promql_names.import_yaml_error})")
        return 77
    used = promql_names.rule_exprs(os.path.join(deploy, "prometheus", "gpudoctor-rules.yml"))
    used += promql_names.dashboard_exprs(os.path.join(deploy, "grafana", "gpudoctor-dashboard.json"))
    wanted = {}
    for where, expr in used:
        for n in promql_names.metric_names(expr):
            wanted.setdefault(n, where)

    with tempfile.TemporaryDirectory() as tmp:
        lines = open(scenario).read().splitlines()
        sample = json.loads(lines[1])
        for g in sample["gpus"][:3]:
            for proc in g["processes"]:
                proc["pid"] = os.getpid()
        sample["gpus"][3]["processes"] = [{"pid": unused_pid(), "used_bytes": 17179869184,
                                           "type": "compute"}]
        scen = os.path.join(tmp, "scenario.jsonl")
        with open(scen, "w") as f:
            f.write(lines[0] + "\n" + json.dumps(sample) + "\n")
        cfg = os.path.join(tmp, "serve.toml")
        with open(cfg, "w") as f:
            f.write("[alerting]\nwindow_s = 10\nevaluate_every_s = 1\n")
        port = free_port()
        log = open(os.path.join(tmp, "serve.log"), "w+")
        p = subprocess.Popen([gpudoctor, "--nvml-lib", fake, "--kmsg", "none", "--interval", "1s",
                              "serve", "--listen", f"127.0.0.1:{port}", "--no-db", "--config", cfg],
                             env=dict(os.environ, FAKE_NVML_SCENARIO=scen), stdout=log,
                             stderr=subprocess.STDOUT)
        # Some families need time: rates need two samples, findings a few.
        # Poll until every wanted name is there or the deadline passes.
        try:
            page, missing = "", sorted(wanted)
            deadline = time.time() + STARTUP_S + FINDING_S
            while missing and time.time() < deadline and p.poll() is None:
                try:
                    page = get(f"http://127.0.0.1:{port}/metrics")
                    have = families(page) | promql_names.PROMETHEUS_SYNTHETIC
                    missing = sorted(n for n in wanted if n not in have)
                except OSError:
                    pass
                if missing:
                    time.sleep(0.5)
        finally:
            p.send_signal(signal.SIGTERM)
            try:
                rc = p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = "none (killed after 10 s)"
            log.seek(0)
            serve_log = log.read()
            log.close()
        # SIGTERM is the normal way to stop the daemon (systemd, kubelet).
        if rc != 0:
            print(f"FAIL: gpudoctor serve exit status after SIGTERM: {rc}; its output:\n"
                  f"{serve_log[-3000:]}")
            return 1
        if not page:
            print(f"FAIL: no /metrics from gpudoctor serve; its output:\n{serve_log[-3000:]}")
            return 1

    for n in missing:
        print(f"FAIL: {n} (used by {wanted[n]}) is not on /metrics")
    print(f"{len(wanted)} metric names used by deploy/, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
