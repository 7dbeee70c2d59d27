"""`gpudoctor top --prometheus URL`, the fleet live, end to end: a real
Prometheus backfilled with promtool (test_prometheus_source's helpers) with
seven nodes' dcgm-exporter series, and the fleet screen in tmux:
  gpu-ecc    GPU 1 has 2 volatile double-bit ECC errors -> ecc-uncorrectable
             (critical): listed first, with its finding
  gpu-stale  its series end 150 s ago -> "stale 2m", greyed
  gpu-gone   its series end 20 minutes ago, past Prometheus' 5-minute
             lookback: no refresh lists it, the look back over the last
             hour at start does -> "gone 20m"
  gpu-hot    held down by heat (busy, SM clock low, the thermal slowdown
             reason set), scraped every second -> after three scrapes the
             window rule of diagnose says thermal-throttling (warning)
  gpu-ok-1..3  healthy
The fresh nodes' series run 10 minutes past now, so each round finds a
sample at most one step old however long the test takes. The screen must
list every node within one refresh, filter with `/`, open a node with Enter
(its GPUs as top's panels, its findings, what it could not judge) and go
back with q. promtool or prometheus missing fails the test: it is never
skipped."""
import os
import re
import subprocess
import tempfile
import time
import unittest

from gd_e2e import GPUDOCTOR, kill_tree
from gd_tmux import Tmux
from test_prometheus_source import DCGM, STEP, gpu_values, start_prometheus

NODES = ["gpu-ok-1", "gpu-ok-2", "gpu-ecc", "gpu-ok-3", "gpu-stale", "gpu-gone", "gpu-hot"]
STALE_S = 150
GONE_S = 1200


def exposition(now):
    start = (now - 1800) // STEP * STEP
    out = []
    for name, typ, _help in DCGM:
        out.append(f"# TYPE {name} {typ}")
        for k, node in enumerate(NODES):
            end = {"gpu-stale": now - STALE_S, "gpu-gone": now - GONE_S}.get(node, now + 600)
            for gpu in (0, 1):
                labels = (f'gpu="{gpu}",UUID="GPU-{node}-{gpu}",device="nvidia{gpu}",'
                          f'modelName="NVIDIA H100 80GB HBM3",Hostname="{node}",'
                          f'instance="10.3.0.{k + 1}:9400",job="dcgm-exporter"')
                # gpu-hot: a scrape a second over the last minute and the
                # next ten, so each refresh finds a new one.
                times = (range(now - 60, end + 1) if node == "gpu-hot"
                         else range(start, end + 1, STEP))
                for i, t in enumerate(times):
                    v = gpu_values(node == "gpu-hot", i)
                    if node == "gpu-ecc" and gpu == 1:
                        v["DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"] = 2
                    out.append(f"{name}{{{labels}}} {v[name]} {t}")
    out.append("# EOF")
    return "\n".join(out) + "\n"


def node_rows(screen):
    """The node names of the list's rows, top to bottom."""
    rows = []
    for line in screen.split("\n"):
        m = re.match(r"\s*(gpu-[a-z0-9-]+)\s", line)
        if m:
            rows.append(m.group(1))
    return rows


def node_view(name):
    """A node's view, drawn whole: ncurses draws top to bottom, so a screen
    read while the view replaces the list has the view's head above the
    list's rows until the view's own footer is drawn."""
    return lambda s: f"node {name}" in s and "back to the fleet" in s


class TopFleet(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.now = int(time.time())
        cls.prom, cls.url, cls.log = start_prometheus(cls.tmp.name, exposition(cls.now))

    @classmethod
    def tearDownClass(cls):
        kill_tree(cls.prom)
        cls.log.close()
        cls.tmp.cleanup()

    def pane(self, *args):
        pane = Tmux(self.tmp.name, [GPUDOCTOR, "--interval", "2", "top"] + list(args),
                    width=140, height=30)
        self.addCleanup(pane.close)
        return pane

    def test_the_fleet_worst_first_stale_marked_and_a_node_opened(self):
        pane = self.pane("--prometheus", self.url)
        # The first round (its requests bounded by the round's deadline).
        screen = pane.wait_for(lambda s: all(n in s for n in NODES), timeout=20)
        rows = node_rows(screen)
        self.assertEqual(sorted(rows), sorted(NODES), screen)
        # The critical node first, then the one that no longer answers; the
        # stale one next (or after gpu-hot, once its throttling is judged).
        self.assertEqual(rows[:2], ["gpu-ecc", "gpu-gone"], screen)
        self.assertIn("gpu-stale", rows[2:4], screen)
        ecc = next(l for l in screen.split("\n") if l.lstrip().startswith("gpu-ecc"))
        self.assertIn("CRIT ecc-uncorrectable", ecc)
        stale = next(l for l in screen.split("\n") if l.lstrip().startswith("gpu-stale"))
        self.assertRegex(stale, r"stale [23]m")
        self.assertNotIn("ecc-uncorrectable", stale)
        for n in ("gpu-ok-1", "gpu-ok-2", "gpu-ok-3", "gpu-hot"):
            line = next(l for l in screen.split("\n") if l.lstrip().startswith(n))
            self.assertRegex(line, r" ok \d+s ")
            self.assertRegex(line, r" 2 ")  # GPUs
        gone = next(l for l in screen.split("\n") if l.lstrip().startswith("gpu-gone"))
        self.assertRegex(gone, r"gone (19|20|21)m")
        self.assertIn("7 nodes", screen)
        self.assertIn("1 critical", screen)
        self.assertIn("1 stale", screen)
        self.assertIn("1 not answering", screen)

        # The hot node: throttling is a window rule, judged once three of its
        # scrapes are in (a refresh every 2 s, a scrape every second); it
        # then ranks above the stale node.
        screen = pane.wait_for(r"gpu-hot .*WARN thermal-throttling", timeout=30)
        self.assertEqual(node_rows(screen)[:4], ["gpu-ecc", "gpu-gone", "gpu-hot", "gpu-stale"],
                         screen)
        for n in ("gpu-ok-1", "gpu-ok-2", "gpu-ok-3"):
            line = next(l for l in screen.split("\n") if l.lstrip().startswith(n))
            self.assertNotRegex(line, r"WARN|CRIT|INFO", screen)

        # `/` filters by node name (or finding id); Esc clears it.
        pane.keys("/")
        pane.type("ok-2")
        pane.keys("Enter")
        screen = pane.wait_for(lambda s: node_rows(s) == ["gpu-ok-2"])
        self.assertIn("(1 shown)", screen)
        pane.keys("Escape")
        pane.wait_for(lambda s: len(node_rows(s)) == len(NODES))

        # Enter opens the selected node (Home: the first, the worst): its
        # GPUs as top's panels, its finding with evidence, what it did not
        # judge.
        pane.keys("Home", "Enter")
        screen = pane.wait_for(node_view("gpu-ecc"))
        self.assertIn("UTIL[", screen)
        self.assertIn("MEM[", screen)
        self.assertRegex(screen, r"CRIT ecc-uncorrectable\s+GPU 1")
        self.assertIn("volatile uncorrectable ECC: 2", screen)
        self.assertIn("not judged", screen)
        # Its processes: one instant query for this node; dcgm-exporter's
        # series alone carry none.
        pane.wait_for(r"processes: not reported \(dcgm-exporter gives none; run gpudoctor "
                      r"serve on the node\)")
        pane.keys("q")
        pane.wait_for(lambda s: len(node_rows(s)) == len(NODES) and "DATA" in s)

        # The hot node, found by its finding's id, opened: the window
        # rule's finding beside check's.
        pane.keys("/")
        pane.type("thermal")
        pane.keys("Enter")
        pane.wait_for(lambda s: node_rows(s) == ["gpu-hot"])
        pane.keys("Enter")
        screen = pane.wait_for(node_view("gpu-hot"))
        self.assertRegex(screen, r"WARN thermal-throttling\s+GPU 0")
        pane.keys("q")
        pane.wait_for("DATA")
        pane.keys("Escape")

        # The stale node opened: its values greyed, how old they are.
        pane.keys("/")
        pane.type("stale")
        pane.keys("Enter")
        pane.wait_for(lambda s: node_rows(s) == ["gpu-stale"])
        pane.keys("Enter")
        screen = pane.wait_for(node_view("gpu-stale"))
        self.assertRegex(screen, r"stale [23]m: its newest sample is [23]m old")
        pane.keys("Escape")
        pane.wait_for("DATA")
        pane.keys("q")
        pane.wait_for("EXIT=0")

    def test_a_server_that_does_not_answer_is_said_not_waited_on(self):
        # A port nobody listens on: each round fails at once, and says why.
        pane = self.pane("--prometheus", "http://127.0.0.1:9")
        pane.wait_for("cannot read the fleet", timeout=20)
        pane.keys("q")
        pane.wait_for("EXIT=0")

    def test_match_narrows_the_fleet(self):
        pane = self.pane("--prometheus", self.url, "--match", '{Hostname=~"gpu-ok-.*"}')
        screen = pane.wait_for(lambda s: len(node_rows(s)) == 3, timeout=20)
        self.assertEqual(sorted(node_rows(screen)), ["gpu-ok-1", "gpu-ok-2", "gpu-ok-3"])
        pane.keys("q")
        pane.wait_for("EXIT=0")

    def test_usage_errors(self):
        def run(*args):
            return subprocess.run([GPUDOCTOR, "top"] + list(args), capture_output=True,
                                  text=True, timeout=30)
        p = run("--match", '{a="b"}')
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--match is for --prometheus", p.stderr)
        p = run("--prometheus", self.url, "--match", "{a=b}")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--match", p.stderr)
        p = run("--prometheus", self.url, "--connect", "http://127.0.0.1:9")
        self.assertEqual(p.returncode, 2, p.stderr)
        p = run("--prometheus", "ftp://x")
        self.assertEqual(p.returncode, 2, p.stderr)


if __name__ == "__main__":
    unittest.main()
