#!/usr/bin/python3
"""The picture of the dashboard's Fleet page (README.md, docs/serve.md): a
made-up fleet of 18 backfilled nodes of 8 GPUs (busy, half busy and idle
ones, one with ECC errors, one stale, one that stopped answering 20 minutes
ago) and one live `gpudoctor serve` scraped by a real Prometheus
(tests/e2e/test_fleet_dashboard.py's helpers), shown by a serve started
with --fleet-prometheus in headless Chromium, the faulty node opened.
Written as docs/images/fleet-dashboard.png.
    scripts/fleet-dashboard-screenshot.py BUILD_DIR"""
import json
import os
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = os.path.abspath(sys.argv[1])
os.environ.setdefault("GPUDOCTOR", f"{build}/src/cli/gpudoctor")
os.environ.setdefault("FAKE_NVML_LIB", f"{build}/tests/fake_nvml/lib/libnvidia-ml.so.1")
os.environ.setdefault("GD_TEST_DATA", f"{root}/tests/data")
sys.path.insert(0, os.path.join(root, "tests", "e2e"))

import test_fleet_dashboard as fd  # noqa: E402 (needs the environment above)
from cdp import Browser  # noqa: E402
from test_serve import Serve, first_sample_scenario  # noqa: E402

OUT = os.path.join(root, "docs", "images", "fleet-dashboard.png")


def made_up_fleet():
    nodes = []
    for k in range(18):
        name = f"gpu-{k + 1:02d}"
        if k % 5 == 3:    # idle
            utils = [(k * 7 + g * 3) % 6 for g in range(8)]
        elif k % 5 == 1:  # half busy
            utils = [(k * 37 + g * 53) % 101 for g in range(8)]
        else:             # busy
            utils = [90 + (k * 3 + g * 7) % 11 for g in range(8)]
        nodes.append(fd.Node(name, utils, dbe_gpu=5 if name == "gpu-11" else None,
                             ended_s={"gpu-07": fd.STALE_S, "gpu-16": 1200}.get(name, 0)))
    return nodes


def main():
    with tempfile.TemporaryDirectory() as tmp:
        nodes = made_up_fleet()
        fleet = fd.FleetSetup(tmp, nodes, history_s=1500)
        try:
            scenario, _, _ = first_sample_scenario(tmp)
            server = Serve(scenario, ["--no-db", "--fleet-prometheus", fleet.url], tmp)
            browser = Browser(width=1280, height=760)
            try:
                page = browser.new_page()
                page.navigate(f"http://{server.host}:{server.port}/#fleet")
                want = len(nodes) + 1
                page.wait_for(f"document.querySelectorAll('#fleet-grid tr.fleet-node').length == {want}"
                              " && !!document.querySelector('tr[data-node=\"gpu-16\"][data-status=\"gone\"]')",
                              timeout=60)
                page.evaluate("document.querySelector('tr[data-node=\"gpu-11\"] button.fold').click()")
                page.wait_for("!!document.querySelector('tr[data-open=\"gpu-11\"]')")
                page.screenshot(OUT)
                print("wrote", os.path.relpath(OUT, root), os.path.getsize(OUT), "bytes")
                print(json.dumps([r["name"] for r in json.loads(page.evaluate(fd.ROWS_JS))]))
            finally:
                browser.close()
                server.kill()
        finally:
            fleet.stop()


if __name__ == "__main__":
    main()
