#!/usr/bin/env python3
"""serve_attack.py [BUILD_DIR] [--gpudoctor BIN] [--scrapes N] [--phase-s S] [--phases LIST]

`gpudoctor serve` under hostile clients: /metrics latency (p50/p99/max over
N scrapes, each on a fresh connection like a scraper after a restart) and
serve's RSS, quiet and under each attack:
  slowloris  64 clients sending one header byte every 2 s, never finishing;
  idle       2,000 connected sockets that send nothing;
  headers    16 concurrent requests of 40,000 headers each, repeated.
Each phase runs on a fresh daemon (4 fake GPUs). A scrape that gets no 200
within 5 s counts as failed. Prints numbers; asserts nothing. Needs the
targets gpudoctor and fake_nvml in BUILD_DIR (default: build); python3 only.
"""
import argparse
import os
import re
import resource
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "..", "tests", "data", "scenario_4gpu.jsonl")
SCRAPE_TIMEOUT_S = 5.0


def start_serve(gpudoctor, fake):
    env = dict(os.environ, FAKE_NVML_SCENARIO=SCENARIO, FAKE_NVML_LOOP="1")
    p = subprocess.Popen([gpudoctor, "--nvml-lib", fake, "--kmsg", "none", "serve",
                          "--listen", "127.0.0.1:0", "--no-db"],
                         env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                         text=True, errors="replace")
    for line in p.stderr:
        m = re.search(r'msg="serving".*listen=[0-9.]+:(\d+)', line)
        if m:
            threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
            return p, int(m.group(1))
    raise SystemExit("serve_attack: serve did not start")


def status_kb(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def scrape(port):
    """Seconds to a complete 200 /metrics, or None."""
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=SCRAPE_TIMEOUT_S) as s:
            s.settimeout(SCRAPE_TIMEOUT_S)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
                if time.monotonic() - start > SCRAPE_TIMEOUT_S:
                    return None
        return time.monotonic() - start if data.startswith(b"HTTP/1.1 200") else None
    except OSError:
        return None


class Attack:
    def __init__(self, port):
        self.port = port
        self.stopping = threading.Event()
        self.socks = []
        self.threads = []

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join()
        for s in self.socks:
            s.close()


class Slowloris(Attack):
    def __init__(self, port, clients=64):
        super().__init__(port)
        for _ in range(clients):
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=5)
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                self.socks.append(s)
            except OSError:
                pass  # the server's backlog is full: that client waits
        self.threads.append(threading.Thread(target=self.drip))
        self.threads[0].start()

    def drip(self):
        while not self.stopping.wait(2.0):
            for s in self.socks:
                try:
                    s.send(b"X")
                except OSError:
                    pass


class Idle(Attack):
    def __init__(self, port, sockets=2000):
        super().__init__(port)
        for _ in range(sockets):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            self.socks.append(s)


class Headers(Attack):
    REQUEST = (b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
               b"".join(b"X-Flood-%d: %s\r\n" % (i, b"v" * 48) for i in range(40000)) +
               b"\r\n")

    def __init__(self, port, clients=16):
        super().__init__(port)
        for _ in range(clients):
            t = threading.Thread(target=self.flood)
            t.start()
            self.threads.append(t)

    def flood(self):
        while not self.stopping.is_set():
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=10) as s:
                    s.sendall(self.REQUEST)
                    s.recv(64)
            except OSError:
                pass


def percentile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def phase(name, attack_cls, gpudoctor, fake, scrapes, phase_s):
    proc, port = start_serve(gpudoctor, fake)
    try:
        time.sleep(1.5)  # first samples
        attack = attack_cls(port) if attack_cls else None
        time.sleep(1.0)
        times, failed = [], 0
        end = time.monotonic() + phase_s
        while len(times) + failed < scrapes and time.monotonic() < end:
            t = scrape(port)
            if t is None:
                failed += 1
            else:
                times.append(t)
            time.sleep(0.05)
        rss = status_kb(proc.pid, "VmRSS") / 1024
        hwm = status_kb(proc.pid, "VmHWM") / 1024
        if attack:
            attack.stop()
        times.sort()
        if times:
            lat = (f"p50 {1000 * percentile(times, 0.5):7.2f} ms  p99 "
                   f"{1000 * percentile(times, 0.99):7.2f} ms  max {1000 * times[-1]:7.2f} ms")
        else:
            lat = "no scrape answered"
        print(f"{name:<22} {len(times):4d} ok {failed:4d} failed  {lat}  "
              f"RSS {rss:6.1f} MiB (peak {hwm:6.1f} MiB)", flush=True)
    finally:
        proc.kill()
        proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--gpudoctor", help="binary to test (default BUILD/src/cli/gpudoctor)")
    ap.add_argument("--scrapes", type=int, default=200)
    ap.add_argument("--phase-s", type=float, default=20.0,
                    help="longest time per phase (default 20)")
    ap.add_argument("--phases", default="quiet,slowloris,idle,headers",
                    help="comma-separated subset of quiet,slowloris,idle,headers")
    a = ap.parse_args()
    gpudoctor = a.gpudoctor or os.path.join(a.build, "src", "cli", "gpudoctor")
    fake = os.path.join(a.build, "tests", "fake_nvml", "lib", "libnvidia-ml.so.1")
    for f in (gpudoctor, fake):
        if not os.path.exists(f):
            raise SystemExit(f"serve_attack: {f}: not built")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2500:
        raise SystemExit(f"serve_attack: hard open-files limit {hard} < 2500")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(f"gpudoctor serve under attack: {gpudoctor}; {os.cpu_count()} CPUs, load "
          f"average {' '.join(open('/proc/loadavg').read().split()[:3])}; up to "
          f"{a.scrapes} scrapes of /metrics per phase, at most {a.phase_s:.0f} s")
    phases = {"quiet": ("quiet", None), "slowloris": ("64 slowloris", Slowloris),
              "idle": ("2000 idle sockets", Idle), "headers": ("16 x 40000 headers", Headers)}
    for key in a.phases.split(","):
        name, attack = phases[key]
        phase(name, attack, gpudoctor, fake, a.scrapes, a.phase_s)


if __name__ == "__main__":
    sys.exit(main())
