"""`top --connect @FILE` over N serve endpoints, polled the way all-smi
polls a fleet: one request pair a node a refresh (GET /api/v1/status and
/api/v1/findings), beside top_fleet.py's `top --prometheus` numbers.
    python3 bench/fleet/top_connect.py BUILD_DIR [--nodes 256] [--rounds 30] [--interval 2]
256 real serves are too heavy for a small box: one real `gpudoctor serve`
with the fake NVML's 4-GPU scenario widened to 8 GPUs is started once, its
two replies recorded, and ONE python HTTP server answers every node under a
path prefix of its own (http://127.0.0.1:PORT/n00042), each with its own
Hostname in the recorded status. top runs in tmux under /usr/bin/time and
quits after --rounds refreshes (--exit-after-frames); printed: the round
times the summary line showed, requests a refresh, top's CPU and peak RSS,
and the python server's CPU (it shares the machine). Needs tmux,
/usr/bin/time and the fake NVML (build/tests/fake_nvml)."""
import argparse
import copy
import http.server
import json
import os
import re
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "e2e"))
from gd_tmux import Tmux  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data")


def scenario_8gpu(directory):
    """The fake NVML's 4-GPU scenario with GPUs 4..7 copies of 0..3."""
    with open(os.path.join(DATA, "scenario_4gpu.jsonl")) as f:
        lines = [json.loads(x) for x in f if x.strip()]
    header, samples = lines[0], lines[1:]
    for g in list(header["gpus"]):
        c = copy.deepcopy(g)
        c["index"] += 4
        c["uuid"] = c["uuid"][:-2] + f"{c['index']:02d}"
        c["pci_bus_id"] = f"00000000:{0x40 + c['index']:02X}:00.0"
        c["serial"] = c["serial"][:-1] + str(c["index"])
        header["gpus"].append(c)
    for s in samples:
        for g in list(s["gpus"]):
            c = copy.deepcopy(g)
            c["index"] += 4
            s["gpus"].append(c)
    path = os.path.join(directory, "scenario_8gpu.jsonl")
    with open(path, "w") as f:
        for x in [header] + samples:
            f.write(json.dumps(x) + "\n")
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def record_serve(build, tmp):
    """A real serve's /api/v1/status and /api/v1/findings, as JSON."""
    port = free_port()
    env = dict(os.environ, FAKE_NVML_SCENARIO=scenario_8gpu(tmp))
    nvml = os.path.join(build, "tests", "fake_nvml", "lib", "libnvidia-ml.so.1")
    serve = subprocess.Popen([os.path.join(build, "src", "cli", "gpudoctor"), "--nvml-lib", nvml,
                              "--kmsg", "none", "--interval", "1s", "serve", "--listen",
                              f"127.0.0.1:{port}", "--no-db", "--hostname", "recorded"],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/status") as r:
                    status = json.loads(r.read())
                if status.get("sample") and time.time() > end - 50:  # ten samples in
                    break
            except OSError:
                pass
            if time.time() > end:
                raise SystemExit("serve never answered")
            time.sleep(0.5)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/findings") as r:
            findings = r.read()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/status") as r:
            status = json.loads(r.read())
        return status, findings
    finally:
        serve.kill()
        serve.wait()


class Fleet:
    """One HTTP server, a node under each /nNNNNN prefix."""

    def __init__(self, status, findings, nodes):
        self.requests = 0
        self.lock = threading.Lock()
        bodies = {}
        for k in range(nodes):
            s = copy.deepcopy(status)
            s["header"]["host"]["hostname"] = f"n{k:05d}"
            bodies[f"/n{k:05d}/api/v1/status"] = json.dumps(s).encode()
            bodies[f"/n{k:05d}/api/v1/findings"] = findings
        self.status_bytes = len(bodies["/n00000/api/v1/status"])
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = bodies.get(self.path)
                with outer.lock:
                    outer.requests += 1
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        http.server.ThreadingHTTPServer.request_queue_size = 1024
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def urls(self, nodes):
        return [f"http://127.0.0.1:{self.port}/n{k:05d}" for k in range(nodes)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--nodes", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--interval", default="2")
    a = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    status, findings = record_serve(a.build, tmp.name)
    fleet = Fleet(status, findings, a.nodes)
    print(f"recorded: status {fleet.status_bytes} bytes "
          f"({len(status['sample']['gpus'])} GPUs), findings {len(findings)} bytes")
    serves = os.path.join(tmp.name, "serves.txt")
    with open(serves, "w") as f:
        f.write("\n".join(fleet.urls(a.nodes)) + "\n")
    timing = os.path.join(tmp.name, "time.txt")
    binary = os.path.join(a.build, "src", "cli", "gpudoctor-full")
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    pane = Tmux(tmp.name, ["/usr/bin/time", "-v", "-o", timing, binary, "--interval",
                           a.interval, "top", "--connect", "@" + serves,
                           "--exit-after-frames", str(a.rounds)], width=160, height=40)
    rounds, answering = [], []
    try:
        t0 = time.time()
        pane.wait_for(r"round \d", timeout=120)
        print(f"first round on screen after {time.time() - t0:.2f} s")
        while True:
            screen = pane.screen()
            m = re.search(r"(\d+) nodes .* (\d+) not answering .*round ([0-9.]+)s", screen)
            if m:
                rounds.append(float(m.group(3)))
                answering.append(int(m.group(1)) - int(m.group(2)))
            if "EXIT=" in screen:
                break
            time.sleep(0.25)
        elapsed = time.time() - t0
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        print(f"{a.rounds} rounds in {elapsed:.1f} s; requests {fleet.requests} "
              f"({fleet.requests / a.rounds:.0f} a refresh)")
        print(f"round: median {statistics.median(rounds):.3f} s, max {max(rounds):.3f} s "
              f"(as the summary line showed it); nodes answering: min {min(answering)}")
        print(f"python server CPU: {cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime:.1f} s")
        with open(timing) as f:
            for line in f:
                if re.search(r"Maximum resident|User time|System time|Elapsed", line):
                    print(line.strip())
                m = re.search(r"(User|System) time \(seconds\): ([0-9.]+)", line)
                if m:
                    print(f"  = {float(m.group(2)) / a.rounds:.3f} s a round")
    finally:
        pane.close()
        fleet.server.shutdown()
        tmp.cleanup()


if __name__ == "__main__":
    main()
