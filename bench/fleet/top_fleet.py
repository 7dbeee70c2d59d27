"""`top --prometheus` over a backfilled fleet: how long a round takes (the
requests, their parsing and every node judged, as the screen's summary line
says), how soon the first screen shows, and top's peak RSS and CPU.
    python3 bench/fleet/top_fleet.py BUILD_DIR [--nodes 500] [--gpus 8] [--seconds 100]
Needs prometheus, promtool, tmux and /usr/bin/time (as the e2e tests). Each
node has dcgm-exporter's default series for the last 12 minutes and the
next 10 (so every round finds fresh samples, and each node's 10-minute
window is read whole at start); every tenth node is hot."""
import argparse
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "e2e"))
from gd_e2e import kill_tree  # noqa: E402
from gd_tmux import Tmux  # noqa: E402
from test_prometheus_source import DCGM, STEP, gpu_values, start_prometheus  # noqa: E402


def exposition(nodes, gpus, now):
    start = (now - 720) // STEP * STEP
    out = []
    for name, typ, _help in DCGM:
        out.append(f"# TYPE {name} {typ}")
        for k in range(nodes):
            node = f"n{k:05d}"
            for gpu in range(gpus):
                labels = (f'gpu="{gpu}",UUID="GPU-{node}-{gpu}",modelName="NVIDIA H100 80GB '
                          f'HBM3",Hostname="{node}",instance="{node}:9400",job="dcgm"')
                for i, t in enumerate(range(start, now + 600, STEP)):
                    out.append(f"{name}{{{labels}}} {gpu_values(k % 10 == 0, i)[name]} {t}")
    out.append("# EOF")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--gpus", type=int, default=8)
    # Long enough for several scrapes (15 s apart) to be added to each
    # node's window (monitor/fleet_windows.h) and judged.
    ap.add_argument("--seconds", type=float, default=100)
    a = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    t0 = time.time()
    prom, url, log = start_prometheus(tmp.name, exposition(a.nodes, a.gpus, int(time.time())))
    print(f"backfill and start: {time.time() - t0:.1f} s")
    timing = os.path.join(tmp.name, "time.txt")
    binary = os.path.join(a.build, "src", "cli", "gpudoctor-full")
    pane = Tmux(tmp.name, ["/usr/bin/time", "-v", "-o", timing, binary, "--interval", "2",
                           "top", "--prometheus", url], width=160, height=40)
    try:
        t0 = time.time()
        pane.wait_for(r"round \d", timeout=300)
        print(f"first round on screen after {time.time() - t0:.2f} s")
        # The window rules' findings: once each node's last 10 minutes are
        # read (a round later).
        pane.wait_for(r"WARN", timeout=300)
        print(f"window findings on screen after {time.time() - t0:.2f} s")
        time.sleep(a.seconds)
        print(re.search(r".*round [0-9.]+s.*", pane.screen()).group(0))
        pane.keys("q")
        pane.wait_for("EXIT=0", timeout=30)
        with open(timing) as f:
            for line in f:
                if re.search(r"Maximum resident|User time|System time|Elapsed", line):
                    print(line.strip())
    finally:
        pane.close()
        kill_tree(prom)
        log.close()
        tmp.cleanup()


if __name__ == "__main__":
    main()
