"""`gpudoctor top --connect URL,URL,...`: the fleet screen fed by running
serves over their JSON API, one request pair a node a refresh, in tmux.
Three live serves with their own --hostname (node-ecc's scenario has a
failed row remap on GPU 1: serve's own diagnosis says ecc-uncorrectable,
critical) and one URL nobody listens on:
  - every row is listed within one refresh, the faulty node first with its
    finding, the dead URL with its error ("Connection refused");
  - one serve killed: its row says it no longer answers (gone, with its age)
    within two refreshes while the others' rows keep their fresh age;
  - Enter on a node shows its GPU processes (a real process with a name of
    its own, holding memory on GPU 0 of the fake scenario);
  - q quits promptly.
The same with --connect @FILE (comments, blank lines), and a bad line is a
one-line usage error naming FILE:LINE."""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import unittest

from gd_e2e import GPUDOCTOR, load_scenario, scenario_4gpu, write_scenario
from gd_tmux import Tmux
from test_serve import Serve

GiB = 1 << 30
NAMES = ["node-ecc", "node-b", "node-c"]
PROC_NAME = "fleet-trainer"

# A process named PROC_NAME (its comm) that lives until killed.
NAMED = r"""
import ctypes, sys, time
ctypes.CDLL(None).prctl(15, b"%s", 0, 0, 0)
print("ready", flush=True)
time.sleep(600)
""" % PROC_NAME.encode().decode()


def dead_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nobody listens there now
    return port


def row_of(screen, name):
    for line in screen.split("\n"):
        if line.lstrip().startswith(name + " "):
            return line
    return None


def node_order(screen, names):
    out = []
    for line in screen.split("\n"):
        m = re.match(r"\s*(\S+)\s", line)
        if m and m.group(1) in names:
            out.append(m.group(1))
    return out


class TopConnectFleet(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.named = subprocess.Popen([sys.executable, "-c", NAMED], stdout=subprocess.PIPE,
                                     text=True)
        assert cls.named.stdout.readline().strip() == "ready"
        header, samples = load_scenario(scenario_4gpu())
        # Only our process holds GPU memory (the scenario's own pids are not
        # processes here: their memory would be orphaned).
        for s in samples:
            for g in s["gpus"]:
                g["processes"] = []
                g["mem_used_bytes"] = 300 << 20
            g0 = s["gpus"][0]
            g0["processes"] = [{"pid": cls.named.pid, "used_bytes": 12 * GiB,
                                "type": "compute"}]
            g0["mem_used_bytes"] = 12 * GiB + (300 << 20)
        healthy = write_scenario(header, samples, cls.tmp.name)
        for s in samples:
            s["gpus"][1]["remapped_rows_failure"] = True
        faulty = write_scenario(header, samples, cls.tmp.name)
        cls.serves = {}
        for name in NAMES:
            cls.serves[name] = Serve(faulty if name == "node-ecc" else healthy,
                                     ["--no-db", "--hostname", name], tmp=cls.tmp.name)
        cls.dead = f"http://127.0.0.1:{dead_port()}"
        cls.urls = [f"http://127.0.0.1:{cls.serves[n].port}" for n in NAMES] + [cls.dead]

    @classmethod
    def tearDownClass(cls):
        for s in cls.serves.values():
            s.kill()
        cls.named.kill()
        cls.named.wait()
        cls.named.stdout.close()
        cls.tmp.cleanup()

    def pane(self, connect, interval="1s"):
        pane = Tmux(self.tmp.name, [GPUDOCTOR, "--interval", interval, "top", "--connect",
                                    connect], width=140, height=40, env={"LANG": "C.UTF-8"})
        self.addCleanup(pane.close)
        return pane

    def test_the_serves_as_a_fleet_a_dead_one_marked_and_a_node_opened(self):
        pane = self.pane(",".join(self.urls))
        dead_label = self.dead[len("http://"):]
        everyone = NAMES + [dead_label]
        # Within one refresh (1 s; each request's deadline 2 s): all four.
        screen = pane.wait_for(
            lambda s: all(row_of(s, n) for n in everyone) and "ecc-uncorrectable" in s,
            timeout=15)
        order = node_order(screen, everyone)
        self.assertEqual(order[0], "node-ecc", screen)
        self.assertEqual(order[1], dead_label, screen)
        self.assertIn("CRIT ecc-uncorrectable", row_of(screen, "node-ecc"))
        self.assertRegex(row_of(screen, dead_label), r"refused .*cannot reach "
                         + re.escape(self.dead) + ": no connection")
        for n in ("node-b", "node-c"):
            self.assertRegex(row_of(screen, n), r" ok \d+s .* 4 ", screen)
        self.assertIn("4 nodes", screen)
        self.assertIn("1 critical", screen)
        self.assertIn("gpudoctor top — fleet 4 serves", screen)

        # node-c goes away: not answering within two refreshes; node-b's
        # values keep coming (its age stays within a refresh or two).
        killed = time.monotonic()
        self.serves["node-c"].kill()
        screen = pane.wait_for(lambda s: re.search(r" gone \d+s ", row_of(s, "node-c") or ""),
                               timeout=10)
        self.assertLess(time.monotonic() - killed, 2 * 1 + 2 + 1.5, screen)
        self.assertRegex(row_of(screen, "node-b"), r" ok [0-3]s ")
        self.assertRegex(row_of(screen, "node-ecc"), r"CRIT ecc-uncorrectable")
        screen = pane.wait_for(lambda s: re.search(r" ok [0-3]s ", row_of(s, "node-b") or "")
                               and re.search(r" gone [2-9]s ", row_of(s, "node-c") or ""),
                               timeout=10)
        self.assertIn("2 not answering", screen)

        # Enter on node-b: its GPU processes from serve's status reply. It
        # is picked by name (`/`): its place in the order moves while
        # node-c's status goes from late to refused.
        pane.keys("/")
        pane.type("node-b")
        pane.keys("Enter")
        pane.wait_for(lambda s: node_order(s, everyone) == ["node-b"])
        pane.keys("Home", "Enter")
        # The view drawn whole (its footer comes last), its processes in.
        screen = pane.wait_for(lambda s: PROC_NAME in s and "back to the fleet" in s,
                               timeout=10)
        self.assertIn("node node-b", screen)
        self.assertRegex(screen, r"processes \(1\)")
        line = next(l for l in screen.split("\n") if PROC_NAME in l)
        self.assertIn(str(self.named.pid), line)
        self.assertIn("12.0 GiB", line)
        self.assertRegex(screen, r"findings \(\d+\): serve's own live diagnosis")
        # The node that stopped answering: why, in its view.
        pane.keys("q")
        pane.wait_for(lambda s: "Enter open node" in s)
        pane.keys("Escape")  # node-b's filter off
        pane.wait_for(lambda s: len(node_order(s, everyone)) == len(everyone))
        pane.keys("/")
        pane.type("node-c")
        pane.keys("Enter")
        pane.wait_for(lambda s: "(1 shown)" in s)
        pane.keys("Enter")
        screen = pane.wait_for(lambda s: "node node-c" in s and "back to the fleet" in s)
        self.assertRegex(screen, r"data: gone \d+s: not answering \(cannot reach "
                         + re.escape(self.urls[2]))
        pane.keys("q")
        pane.keys("Escape")
        pane.wait_for(lambda s: "Enter open node" in s and "(1 shown)" not in s)
        quit_at = time.monotonic()
        pane.keys("q")
        screen = pane.wait_for(r"EXIT=\d+", timeout=5)
        self.assertIn("EXIT=0", screen)
        self.assertLess(time.monotonic() - quit_at, 2.0)

    def test_a_file_of_serves_and_a_bad_line(self):
        path = os.path.join(self.tmp.name, "serves.txt")
        with open(path, "w") as f:
            f.write("# the rack\n\n" + "\n".join(self.urls[:2]) + "   # two of them\n")
        pane = self.pane("@" + path)
        screen = pane.wait_for(lambda s: row_of(s, "node-ecc") and row_of(s, "node-b"),
                               timeout=15)
        self.assertIn(f"2 serves of {path}", screen)
        pane.keys("q")
        pane.wait_for(r"EXIT=0", timeout=5)

        with open(path, "w") as f:
            f.write(self.urls[0] + "\n# fine\nnot a url\n")
        p = subprocess.run([GPUDOCTOR, "top", "--connect", "@" + path], capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(p.stderr.strip().split("\n")), 1, p.stderr)
        self.assertIn(f"{path}:3: ", p.stderr)


if __name__ == "__main__":
    unittest.main()
