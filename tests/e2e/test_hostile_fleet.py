"""`top --prometheus` (the fleet, live) against a hostile Prometheus the test
runs (fake_prometheus.py), in tmux as a user keeps it open: node names with
terminal escapes and of 100 KB, more nodes than the bound, a server that
never answers, a reply far past the client's bounds. The screen must stay
the screen (no escape reaches the terminal, no name widens a row), say
what it left out or why it cannot read the fleet, stay in bounded memory
and quit at once. And the server's credentials reach it, from top and
from serve's Fleet page."""
import json
import os
import re
import subprocess
import tempfile
import time
import unittest
import urllib.request

from fake_prometheus import MiB, FakePrometheus, matrix
from gd_e2e import GPUDOCTOR, RSS_LIMIT_FACTOR, RSS_SANITIZER_QUARANTINE, scenario_4gpu
from gd_tmux import Tmux
from test_serve import Serve
from test_who_kill import alive, state_of, wait_until

WIDTH = 140
# top's RSS against a hostile server (a release build: under 60 MB with
# 2,048 nodes); sanitizer builds get their factor and quarantine.
RSS_LIMIT = 120 * MiB * RSS_LIMIT_FACTOR + RSS_SANITIZER_QUARANTINE

# Each fleet metric's value; the sample time's query answers the scrape time.
VALUES = {"DCGM_FI_DEV_GPU_UTIL": 77, "DCGM_FI_DEV_FB_USED": 40_000,
          "DCGM_FI_DEV_FB_FREE": 41_000, "DCGM_FI_DEV_GPU_TEMP": 61,
          "DCGM_FI_DEV_POWER_USAGE": 300}
METRIC = re.compile(r"(DCGM_FI_\w+|gpudoctor_\w+)")


def fleet(nodes):
    """query_range answering the fleet's (unbatched) queries for `nodes`,
    one GPU each, scraped at the query's time."""
    def answer(query, start, end, step):
        # The metric, not the by-clause's DCGM_FI_DRIVER_VERSION label.
        names = [n for n in METRIC.findall(query) if n != "DCGM_FI_DRIVER_VERSION"]
        if not names or names[-1] not in VALUES:
            return None
        value = end if "timestamp(" in query else VALUES[names[-1]]
        return 200, "application/json", matrix([
            ({"Hostname": n, "gpu": "0", "UUID": f"GPU-{k}", "modelName": "NVIDIA H100 80GB HBM3"},
             [(end, str(value))]) for k, n in enumerate(nodes)])
    return answer


def rss_of(pid):
    """The RSS of `pid`; 0 when it has just ended (a run that was ending
    when it was found: the caller looks again)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmRSS:"))
    except (FileNotFoundError, ProcessLookupError, StopIteration):
        return 0


def threads_waiting(pid):
    """Each thread of `pid`: its name, state and where the kernel has it
    waiting (what a slow quit was waiting on)."""
    try:
        tids = sorted(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return ""
    out = []
    for tid in tids:
        parts = []
        for name in ("comm", "wchan", "syscall"):
            try:
                with open(f"/proc/{pid}/task/{tid}/{name}") as f:
                    parts.append(f.read().strip()[:80])
            except OSError:
                parts.append("?")
        out.append(f"  {tid} {state_of(tid)} " + " ".join(parts))
    return "\n".join(out)


class HostileFleet(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def server(self, **kw):
        s = FakePrometheus(**kw)
        self.addCleanup(s.stop)
        return s

    def top(self, server, *args):
        self.url = server.url()  # names this test's top among the processes
        pane = Tmux(self.tmp.name, [GPUDOCTOR, "--interval", "2", "top", "--prometheus",
                                    server.url()] + list(args), width=WIDTH, height=30)
        self.addCleanup(pane.close)
        return pane

    def top_pid(self):
        """The pid of the one `gpudoctor top` this test runs."""
        end = time.monotonic() + 10
        while time.monotonic() < end:
            out = subprocess.run(
                ["pgrep", "-f", "-n", f"{re.escape(GPUDOCTOR)}.* --prometheus {re.escape(self.url)}"],
                capture_output=True, text=True).stdout.split()
            if out:
                return int(out[0])
            time.sleep(0.1)
        raise AssertionError("top is not running")

    def quit_promptly(self, pane):
        """q ends top at once, whatever its round waits on. Timed from the
        key's delivery (tmux's send-keys returns once its server has passed
        it on) to the process's end; the screen's EXIT line follows."""
        pid = pane.program_pid()
        asked = time.monotonic()
        pane.keys("q")
        # In a loaded sanitizer run, top was found gone at the first look,
        # 12 s after the key was asked for (no thread listed): the time had
        # gone before send-keys returned. tmux's time is not top's.
        sent = time.monotonic()
        waits = ""
        if not wait_until(lambda: not alive(pid), 3):
            waits = threads_waiting(pid)  # for the failure's message
            self.assertTrue(wait_until(lambda: not alive(pid), 12),
                            f"top was still running 15 s after q:\n{waits}")
        gone = time.monotonic() - sent
        self.assertLess(gone, 5, f"top took {gone:.2f} s to end after q (tmux took "
                        f"{sent - asked:.2f} s to send it):\n{waits}")
        pane.wait_for("EXIT=0", timeout=5)

    def test_escapes_and_huge_names_stay_out_of_the_terminal(self):
        nodes = ["good-1", "evil\x1b]0;pwned\x07", "\x1b[2J\x1b[Hwiped", "x" * 100_000,
                 "good-2"]
        pane = self.top(self.server(query_range=fleet(nodes)))
        screen = pane.wait_for(lambda s: "good-1" in s and "good-2" in s, timeout=20)
        # The title the terminal shows is the shell's, not the server's.
        title = pane.tmux("display-message", "-p", "-t", "t", "#{pane_title}").stdout
        self.assertNotIn("pwned", title)
        # The screen was not wiped by the server's clear; no row is wider
        # than the terminal, and no raw escape was drawn as text.
        self.assertIn("NODE", screen)
        for line in screen.split("\n"):
            self.assertLessEqual(len(line), WIDTH, line[:200])
        self.assertNotIn("\x1b", screen)
        # A name that is no host name is not a node (and the summary says
        # how many GPU series it left out); the real ones are, with their
        # values.
        self.assertRegex(screen, r"\b2 nodes\b")
        self.assertIn("+3 GPU series naming no host, left out", screen)
        self.assertRegex(screen, r"good-1 +ok \d+s +1 \S +\S +61°C +300W")
        self.assertNotIn("x" * 200, screen)
        self.quit_promptly(pane)

    def test_more_nodes_than_the_bound_are_counted_not_kept(self):
        nodes = [f"n{i:05d}" for i in range(3000)]
        pane = self.top(self.server(query_range=fleet(nodes)))
        screen = pane.wait_for("2048 nodes", timeout=60)
        self.assertIn("+952 nodes past the bound of 2048", screen)
        # 2,048 nodes of one GPU: a few MB of frames, not a copy per round.
        pane.wait_for(r"round \d", timeout=30)
        self.assertLess(rss_of(self.top_pid()), RSS_LIMIT)
        self.quit_promptly(pane)

    def test_a_server_that_never_answers_is_said_and_not_waited_on(self):
        server = self.server(query_range=fleet(["n1"]), delay_s=600)
        pane = self.top(server)
        # The round's deadline (10 s) ends it: the screen says why.
        screen = pane.wait_for("cannot read the fleet", timeout=30)
        self.assertRegex(screen, r"no complete reply within 10s")
        self.quit_promptly(pane)

    def test_a_reply_past_the_bounds_is_refused_in_bounded_memory(self):
        # 64 MB of one series' points: past the client's bounds.
        def huge(query, start, end, step):
            pts = ",".join(f'[{end},"1"]' for _ in range(3_000_000))
            body = ('{"status":"success","data":{"resultType":"matrix","result":['
                    '{"metric":{"Hostname":"n1","gpu":"0"},"values":[' + pts + ']}]}}')
            return 200, "application/json", body.encode()
        pane = self.top(self.server(query_range=huge))
        peak = 0
        end = time.monotonic() + 30
        screen = ""
        while time.monotonic() < end:
            peak = max(peak, rss_of(self.top_pid()))
            screen = pane.screen()
            if "cannot read the fleet" in screen:
                break
            time.sleep(0.1)
        self.assertIn("cannot read the fleet", screen)
        self.assertLess(peak, RSS_LIMIT)
        self.quit_promptly(pane)

    def test_the_servers_credentials_are_sent(self):
        # A site's Prometheus behind a proxy that wants a token.
        token = os.path.join(self.tmp.name, "token")
        with open(token, "w") as f:
            f.write("s3cret-token\n")
        server = self.server(query_range=fleet(["n1"]))
        pane = self.top(server, "--bearer-token-file", token)
        pane.wait_for(r"n1 +ok", timeout=20)
        auth = {h.get("Authorization") for h in server.headers_seen}
        self.assertEqual(auth, {"Bearer s3cret-token"})
        self.quit_promptly(pane)
        # Without --prometheus the credentials are a usage error.
        p = subprocess.run([GPUDOCTOR, "top", "--bearer-token-file", token],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--bearer-token-file is for --prometheus", p.stderr)
        p = subprocess.run([GPUDOCTOR, "top", "--prometheus", server.url(), "--timeout", "3s"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--timeout is for --connect", p.stderr)

    def test_serve_sends_the_fleet_credentials_too(self):
        token = os.path.join(self.tmp.name, "token")
        with open(token, "w") as f:
            f.write("fleet-token\n")
        server = self.server(query_range=fleet(["n1"]))
        s = Serve(scenario_4gpu(), ["--no-db", "--fleet-prometheus", server.url(),
                                    "--fleet-bearer-token-file", token])
        self.addCleanup(s.kill)
        url = f"http://{s.host}:{s.port}/api/v1/fleet"

        def listed():
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    return [n["name"] for n in json.load(r)["nodes"]] == ["n1"]
            except OSError:
                return False
        end = time.monotonic() + 30
        while not listed():
            self.assertLess(time.monotonic(), end, "the fleet never listed n1")
            time.sleep(0.2)
        self.assertEqual({h.get("Authorization") for h in server.headers_seen},
                         {"Bearer fleet-token"})
        # A token and a user at once is a usage error naming both.
        p = subprocess.run([GPUDOCTOR, "serve", "--no-db", "--fleet-prometheus", server.url(),
                            "--fleet-bearer-token-file", token, "--fleet-basic-auth-user", "u",
                            "--fleet-password-file", token],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--fleet-bearer-token-file and --fleet-basic-auth-user exclude", p.stderr)


if __name__ == "__main__":
    unittest.main()
