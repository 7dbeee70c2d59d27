#!/usr/bin/env python3
"""auth_flood.py [BUILD_DIR] [--gpudoctor BIN] [--clients N] [--logins N] [--flood-from ADDR]

`gpudoctor serve` with basic auth (bcrypt at cost 10, as `htpasswd -nBC 10`
makes) under a wrong-password flood: N clients (default 24) each send
GET /metrics with a new wrong password as fast as they are answered. Meanwhile,
one after the other, valid logins not seen before (each a user of its own, so
none is remembered) ask for /metrics, and a remembered login asks for
/api/v1/history and /metrics. Prints, for each, how many got 200 and their
latency (p50 / max), and what the flood got. The flood comes from 127.0.0.1,
as the logins do, or from --flood-from (another loopback address, such as
127.0.0.2: another client machine). Asserts nothing. Needs the
targets gpudoctor and fake_nvml in BUILD_DIR (default: build); python3 only.
"""
import argparse
import base64
import collections
import http.client
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "..", "tests", "data", "scenario_4gpu.jsonl")
# bcrypt of "pw" at cost 10; every user below has it, so each user's header
# is new to serve while the cost per check stays the same.
HASH = "$2b$10$lLWBFl5pfSwMg0jhQHiEe.QAl4dadUFW9aHDZ7D2M1/.QixLMn3JO"
TIMEOUT_S = 30


def basic(user, password):
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def get(port, path, auth, source=None):
    """(status, seconds); status 0 when it failed or timed out."""
    start = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT_S,
                                      source_address=(source, 0) if source else None)
    try:
        conn.request("GET", path, headers={"Authorization": auth})
        r = conn.getresponse()
        r.read()
        return r.status, time.monotonic() - start
    except (OSError, http.client.HTTPException):
        return 0, time.monotonic() - start
    finally:
        conn.close()


def start_serve(gpudoctor, fake, tmp, users):
    cfg = os.path.join(tmp, "web.yml")
    with open(cfg, "w") as f:
        f.write("basic_auth_users:\n" + "".join(f"  {u}: '{HASH}'\n" for u in users))
    env = dict(os.environ, FAKE_NVML_SCENARIO=SCENARIO, FAKE_NVML_LOOP="1")
    p = subprocess.Popen([gpudoctor, "--nvml-lib", fake, "--kmsg", "none", "serve", "--listen",
                          "127.0.0.1:0", "--db", os.path.join(tmp, "history.db"), "--web-config", cfg],
                         env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                         errors="replace")
    for line in p.stderr:
        m = re.search(r'msg="serving".*listen=[0-9.]+:(\d+)', line)
        if m:
            threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
            return p, int(m.group(1))
    raise SystemExit("auth_flood: serve did not start")


def summary(name, results):
    ok = [s for st, s in results if st == 200]
    codes = collections.Counter(st for st, _ in results)
    lat = f"p50 {statistics.median(ok) * 1000:.0f} ms, max {max(ok) * 1000:.0f} ms" if ok else "no 200"
    print(f"  {name}: {len(ok)}/{len(results)} answered 200 ({lat}); statuses {dict(codes)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--gpudoctor")
    ap.add_argument("--clients", type=int, default=24)
    ap.add_argument("--logins", type=int, default=10)
    ap.add_argument("--flood-from")
    args = ap.parse_args()
    gpudoctor = args.gpudoctor or os.path.join(args.build, "src", "cli", "gpudoctor")
    fake = os.path.join(args.build, "tests", "fake_nvml", "lib", "libnvidia-ml.so.1")
    users = [f"user{i}" for i in range(args.logins)] + ["grafana"]
    with tempfile.TemporaryDirectory() as tmp:
        p, port = start_serve(gpudoctor, fake, tmp, users)
        try:
            cached = basic("grafana", "pw")
            print(f"warm-up login: {get(port, '/metrics', cached)[0]}")
            stop = threading.Event()
            flood = collections.Counter()
            lock = threading.Lock()

            def attacker(i):
                n = 0
                while not stop.is_set():
                    n += 1
                    st, _ = get(port, "/metrics", basic("grafana" if i % 2 else "nobody", f"wrong{i}-{n}"), args.flood_from)
                    with lock:
                        flood[st] += 1

            threads = [threading.Thread(target=attacker, args=(i,), daemon=True) for i in range(args.clients)]
            for t in threads:
                t.start()
            time.sleep(2)
            logins, history, metrics = [], [], []
            for u in users[:-1]:
                logins.append(get(port, "/metrics", basic(u, "pw")))
                history.append(get(port, "/api/v1/history?metric=gpu.util_pct&since=10m", cached))
                metrics.append(get(port, "/metrics", cached))
            stop.set()
            for t in threads:
                t.join()
        finally:
            p.terminate()
            p.wait(20)
    print(f"{gpudoctor} under {args.clients} wrong-password clients from "
          f"{args.flood_from or '127.0.0.1'}:")
    summary("new valid login, /metrics", logins)
    summary("remembered login, /api/v1/history", history)
    summary("remembered login, /metrics", metrics)
    print(f"  flood: {sum(flood.values())} requests, statuses {dict(flood)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
