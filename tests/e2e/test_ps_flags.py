"""ps --tree/--user/--gpu/--sort and the memory history from serve, end to
end with real processes (their pids in the fake's scenario) and a stand-in
for `gpudoctor serve`'s /api/v1/history."""
import http.server
import json
import os
import pwd
import socket
import subprocess
import sys
import threading
import time
import unittest
import urllib.parse

from gd_e2e import E2E, TRAINER, run, spawn_python
from test_who_kill import LAUNCHER, Scenario, kill_pids

GiB = 1 << 30


class FakeServe:
    """Answers GET /api/v1/history like serve (interfaces.md) for the pids
    in `history` ({pid: [(t, bytes), ...]}) and records what was asked."""

    def __init__(self, history):
        self.asked = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                u = urllib.parse.urlparse(self.path)
                q = dict(urllib.parse.parse_qsl(u.query))
                outer.asked.append(q)
                pid = int(q.get("pid", "0"))
                pts = history.get(pid)
                series = [{"gpu": 0, "pid": pid, "points": pts}] if pts else []
                body = json.dumps({"metric": q.get("metric"), "since": 0, "until": 1,
                                   "step": 30, "series": series}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class PsFlags(E2E):
    def setUp(self):
        super().setUp()
        big = spawn_python(TRAINER.format(workers=1))
        small = spawn_python(TRAINER.format(workers=0))
        self.children += [big, small]
        self.big = [int(x) for x in big.stdout.readline().split(",")]
        self.small = int(small.stdout.readline())
        self.path = Scenario(self.tmp.name).write(
            {0: [(self.small, 2 * GiB)], 1: [(self.big[0], 30 * GiB)]})
        self.no_serve = ["--serve", f"http://127.0.0.1:{closed_port()}"]

    def ps_json(self, *args):
        p = run(["ps", "--json"] + self.no_serve + list(args), scenario=self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_gpu_and_user_filters(self):
        rows = self.ps_json("--gpu", "1")["processes"]
        self.assertEqual([r["pid"] for r in rows], [self.big[0]])
        me = pwd.getpwuid(os.geteuid()).pw_name
        self.assertEqual(len(self.ps_json("--user", me)["processes"]), 2)
        self.assertEqual(self.ps_json("--user", "nosuchuser")["processes"], [])

    def test_sort_keys(self):
        self.assertEqual([r["pid"] for r in self.ps_json("--sort", "mem")["processes"]],
                         [self.big[0], self.small])
        self.assertEqual([r["pid"] for r in self.ps_json("--sort", "pid")["processes"]],
                         sorted([self.big[0], self.small]))
        self.assertEqual([r["gpu"] for r in self.ps_json("--sort", "gpu")["processes"]], [0, 1])
        cpu = [r["cpu_pct"] for r in self.ps_json("--sort", "cpu")["processes"]]
        self.assertEqual(cpu, sorted(cpu, reverse=True))
        p = run(["ps", "--sort", "colour"], scenario=self.path)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("colour", p.stderr)

    def test_tree_groups_ranks_under_their_launcher(self):
        script = os.path.join(self.tmp.name, "torchrun")
        with open(script, "w") as f:
            f.write(LAUNCHER)
        launcher = subprocess.Popen([sys.executable, script, "2"], stdout=subprocess.PIPE,
                                    text=True)
        self.children.append(launcher)
        lp, r0, w0, r1, w1 = [int(x) for x in launcher.stdout.readline().split(",")]
        # Ranks and workers are grandchildren: tearDown's kill_tree does not
        # reach them, and they hold the test's stderr open.
        self.addCleanup(kill_pids, [r0, w0, r1, w1])
        path = Scenario(self.tmp.name).write(
            {0: [(r0, 10 * GiB), (self.small, 2 * GiB)], 1: [(r1, 11 * GiB)]})
        p = run(["ps", "--tree", "--json"] + self.no_serve, scenario=path)
        self.assertEqual(p.returncode, 0, p.stderr)
        jobs = json.loads(p.stdout)["jobs"]
        ddp = [j for j in jobs if j["launcher"]]
        self.assertEqual(len(ddp), 1)
        self.assertEqual(ddp[0]["launcher"]["pid"], lp)
        self.assertEqual(sorted(r["pid"] for r in ddp[0]["ranks"]), [r0, r1])
        for rank, worker in ((r0, w0), (r1, w1)):
            r = next(x for x in ddp[0]["ranks"] if x["pid"] == rank)
            self.assertEqual([w["pid"] for w in r["workers"]], [worker])
        alone = [j for j in jobs if not j["launcher"]]
        self.assertEqual([j["ranks"][0]["pid"] for j in alone], [self.small])
        text = run(["ps", "--tree"] + self.no_serve, scenario=path).stdout
        self.assertIn(f"launcher {lp}", text)
        self.assertIn("(2 ranks)", text)
        self.assertIn(f"rank {r0}  GPU 0  10.0 GiB", text)
        self.assertIn(f"`- worker {w1}", text)

    def test_memory_history_from_serve(self):
        serve = FakeServe({self.big[0]: [[1000.0, 20 * GiB], [1030.0, 25 * GiB],
                                         [1060.0, 30 * GiB]],
                          # a 0.6% wobble: flat, not a full swing
                          self.small: [[1000.0, 2 * GiB], [1030.0, 2.012 * GiB],
                                       [1060.0, 2 * GiB]]})
        try:
            p = run(["ps", "--serve", serve.url], scenario=self.path)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("GPU memory, last 10m (from gpudoctor serve)", p.stdout)
            self.assertIn("▁▅█", p.stdout)
            self.assertIn("20.0 GiB -> 30.0 GiB", p.stdout)
            self.assertRegex(p.stdout, rf"{self.small}\s+▁▁▁  2.0 GiB -> 2.0 GiB")
            asked = {q["pid"]: q for q in serve.asked}
            self.assertEqual(set(asked), {str(self.big[0]), str(self.small)})
            q = asked[str(self.big[0])]
            self.assertEqual((q["metric"], q["since"], q["step"]),
                             ("process.used_bytes", "10m", "30s"))
            rows = {r["pid"]: r for r in json.loads(
                run(["ps", "--json", "--serve", serve.url], scenario=self.path).stdout)["processes"]}
            self.assertEqual(rows[self.big[0]]["memory_history"][-1], [1060.0, 30 * GiB])
            self.assertEqual(len(rows[self.small]["memory_history"]), 3)
        finally:
            serve.close()

    def test_without_serve_history_is_silently_absent(self):
        p = run(["ps"] + self.no_serve, scenario=self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        self.assertNotIn("from gpudoctor serve", p.stdout)
        self.assertIn(str(self.big[0]), p.stdout)


if __name__ == "__main__":
    unittest.main()
