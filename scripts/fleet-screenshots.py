#!/usr/bin/python3
"""The pictures of the fleet screen (README.md, docs/fleet.md): the fleet of
tests/e2e/test_fleet_live.py (64 backfilled nodes, one with ECC errors, and
three live `gpudoctor serve` scraped by a real Prometheus) watched by `top
--prometheus` in tmux: the fleet list and a live node opened. Written as PNGs (scripts/ansi_png.py) under docs/images/.
    scripts/fleet-screenshots.py BUILD_DIR"""
import os
import subprocess
import sys
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = os.path.abspath(sys.argv[1])
os.environ.setdefault("GPUDOCTOR", f"{build}/src/cli/gpudoctor")
os.environ.setdefault("FAKE_NVML_LIB", f"{build}/tests/fake_nvml/lib/libnvidia-ml.so.1")
os.environ.setdefault("GD_TEST_DATA", f"{root}/tests/data")
sys.path.insert(0, os.path.join(root, "tests", "e2e"))

import test_fleet_live as fleet  # noqa: E402 (needs the environment above)
from gd_tmux import Tmux  # noqa: E402

WIDTH, HEIGHT = 150, 40


def shot(pane, name):
    ansi = os.path.join(fleet.FleetLive.tmp.name, f"{name}.ansi")
    with open(ansi, "w") as f:
        f.write(pane.tmux("capture-pane", "-p", "-e", "-t", "t").stdout)
    out = os.path.join(root, "docs", "images", f"{name}.png")
    subprocess.run(["/usr/bin/python3", os.path.join(root, "scripts", "ansi_png.py"), ansi, out,
                    str(WIDTH)], check=True)
    print("wrote", os.path.relpath(out, root))


def main():
    fleet.FleetLive.setUpClass()
    try:
        pane = Tmux(fleet.FleetLive.tmp.name,
                    [os.environ["GPUDOCTOR"], "--interval", "3", "top", "--prometheus",
                     fleet.FleetLive.url], env={"LANG": "C.UTF-8"}, width=WIDTH, height=HEIGHT)
        try:
            pane.wait_for("67 nodes", timeout=30)
            time.sleep(4)  # a second round: the live nodes' rates settle
            shot(pane, "fleet-top")
            pane.keys("/")
            pane.type("live-1")
            pane.keys("Enter", "Enter")
            pane.wait_for("node live-1")
            time.sleep(4)  # its processes, asked when the node is opened
            shot(pane, "fleet-top-live-node")
        finally:
            pane.close()
    finally:
        fleet.FleetLive.tearDownClass()


if __name__ == "__main__":
    main()
