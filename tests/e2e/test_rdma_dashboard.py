"""The dashboard's RDMA panel (issue "the fabric"), in headless Chromium
(tests/e2e/cdp.py; Debian's python3 with python3-websocket): `gpudoctor
serve --sys-root DIR` over a copy of a sysfs tree with two HCAs
(test_rdma.FakeSysfs): mlx5_0, an InfiniBand port on NUMA node 0 (GPUs 0
and 1 of the fake's 4), and a RoCE port with a 64-character device name
on NUMA node 1 that is down at half its rate. What a user reads: one row
per port with its state and rate in the words and figures of `gpudoctor
status`, the long name cut off with the whole name in the title, the error
counter that grows shown as growing (the test keeps counting symbol errors
until the page shows it), and on a node without ports no panel at all."""
import json
import os
import re
import unittest

from dashboard_page import open_dashboard, poll
from gd_e2e import E2E, run, scenario_4gpu
from test_rdma import FakeSysfs
from test_web import ARTIFACTS

# The longest name the kernel gives an IB device (IB_DEVICE_NAME_MAX 64).
LONG_HCA = ("mlx5_bond_" + "a1b2c3d4" * 8)[:64]
# The widest the name in the PORT cell may get with it (app.css .rdma-name).
PORT_CELL_MAX_PX = 260
PANEL_TIMEOUT_S = 30

# The panel as the user sees it: visible or not, and each row's cells.
RDMA_JS = r"""(() => {
  const sec = document.getElementById('rdma-section');
  const shown = !!sec && sec.getClientRects().length > 0;
  const ths = Array.from(document.querySelectorAll('#rdma thead th')).map(t => t.innerText.trim());
  const rows = {};
  for (const tr of document.querySelectorAll('#rdma tbody tr[data-port]')) {
    const cells = {};
    Array.from(tr.children).forEach((td, i) => { cells[ths[i]] = td.innerText.trim(); });
    const port = tr.children[0], name = port.querySelector('.rdma-name');
    rows[tr.dataset.port] = {
      cells: cells, title: port.getAttribute('title'),
      clipped: name.scrollWidth > name.clientWidth + 1,
      width: name.getBoundingClientRect().width,
      growing: Array.from(tr.querySelectorAll('[data-counter].grew')).map(e => e.innerText.trim()),
      counters: Array.from(tr.querySelectorAll('[data-counter]')).map(e => e.dataset.counter)};
  }
  return {shown: shown, header: ths, rows: rows,
          text: sec ? sec.innerText : '', t: Number((document.getElementById('cards') || {dataset: {}}).dataset.t || 0)};
})()"""

BYTE_RATE = re.compile(r"^(\d+ B|\d+\.\d (KiB|MiB|GiB|TiB|PiB))/s$")


class RdmaDashboard(E2E):
    def setUp(self):
        super().setUp()
        self.server = self.page = None

    def open(self, sys_root):
        self.server, self.page = open_dashboard(
            self, scenario_4gpu(), ["--no-db", "--sys-root", sys_root])

    def panel(self):
        return self.page.evaluate(RDMA_JS)

    def wait_panel(self, cond, what, timeout=PANEL_TIMEOUT_S, each=None):
        """The panel once `cond(panel)` holds, calling `each()` before every
        look (to make the fixture move); fails after `timeout` s with the
        last panel, the API's sample and serve's log."""
        ok, panel = poll(self.panel, cond, timeout, each=each)
        if ok:
            return panel
        _, _, api = self.server.get("/api/v1/status")
        self.fail(f"{what}: not within {timeout} s.\nThe panel: {json.dumps(panel, indent=1)}\n"
                  f"/api/v1/status: {api[:4000]}\nserve's log:\n" + "\n".join(self.server.log()[-30:])
                  + f"\npage errors: {self.page.errors()}")

    def screenshot(self, name):
        os.makedirs(ARTIFACTS, exist_ok=True)
        self.page.screenshot(os.path.join(ARTIFACTS, name))

    def two_hcas(self):
        sys = FakeSysfs(os.path.join(self.tmp.name, "sys"))
        sys.hca("mlx5_0", "0000:1a:00.0")
        sys.hca(LONG_HCA, "0000:9c:00.0")
        sys.put("devices/pci0000:00/0000:00:01.0/0000:9c:00.0/numa_node", "1\n")
        sys.port_file(LONG_HCA, "link_layer", "Ethernet\n")
        sys.port_file(LONG_HCA, "gid_attrs/ndevs/0", "ens9f0np0\n")
        sys.port_file(LONG_HCA, "state", "1: DOWN\n")
        sys.port_file(LONG_HCA, "phys_state", "3: Disabled\n")
        sys.port_file(LONG_HCA, "rate", "200 Gb/sec (4X HDR)\n")
        # Errors from before: shown as status shows them, not as growing.
        sys.port_file(LONG_HCA, "counters/link_downed", "3\n")
        return sys

    def test_a_row_per_port_and_the_growing_counter(self):
        sys = self.two_hcas()
        # status on the same tree: the words and figures the page must show.
        p = run(["--sys-root", sys.root, "status"], scenario=scenario_4gpu())
        self.assertEqual(p.returncode, 0, p.stderr)
        status = {m.group(1): m.group(2) for m in
                  re.finditer(r"RDMA (\S+/1) (\S+ \S+ Gb/s \S+(?: \(\S+\))?)  rx", p.stdout)}
        self.assertEqual(len(status), 2, p.stdout)

        self.open(sys.root)
        ib, roce = "mlx5_0/1", LONG_HCA + "/1"
        panel = self.wait_panel(lambda p: p["shown"] and set(p["rows"]) == {ib, roce},
                                "the RDMA panel with a row per port")
        self.assertEqual(panel["header"], ["PORT", "STATE", "RATE", "LINK", "RX", "TX", "ERRORS", "NUMA"])
        a, b = panel["rows"][ib]["cells"], panel["rows"][roce]["cells"]
        self.assertEqual(a["STATE"], "ACTIVE/LinkUp")
        self.assertEqual(a["RATE"], "400 Gb/s")
        self.assertEqual(a["LINK"], "InfiniBand")
        self.assertEqual(a["ERRORS"], "none")
        self.assertEqual(a["NUMA"], "NUMA 0 · GPU 0,1")
        self.assertEqual(b["STATE"], "DOWN/Disabled")
        self.assertEqual(b["RATE"], "200 Gb/s")
        self.assertEqual(b["LINK"], "RoCE (ens9f0np0)")
        self.assertEqual(b["ERRORS"], "downed 3")
        self.assertEqual(b["NUMA"], "NUMA 1 · GPU 2,3")
        # The same words and figures as status's line for each port.
        for key, cells in ((ib, a), (roce, b)):
            rate = cells["RATE"].split(" of ")[0]
            self.assertEqual(status[key], f"{cells['STATE']} {rate} {cells['LINK']}", p.stdout)
        for cells in (a, b):
            for col in ("RX", "TX"):
                self.assertRegex(cells[col], BYTE_RATE, cells)
        # The 64-character name: cut off in a narrow cell, whole in its title.
        long = panel["rows"][roce]
        self.assertTrue(long["clipped"], long)
        self.assertLessEqual(long["width"], PORT_CELL_MAX_PX, long)
        self.assertEqual(long["title"], roce)
        self.assertEqual(long["growing"], [], long)

        # mlx5_0 counts symbol errors and moves data (4-byte words) while
        # the page is open: the counter shows as growing, its total as
        # status words it; the RoCE port's old errors stay not growing.
        count = {"errors": 0, "words": 0}

        def more():
            count["errors"] += 5
            count["words"] += 25_000_000  # 100 MB
            sys.port_file("mlx5_0", "counters/symbol_error", f"{count['errors']}\n")
            sys.port_file("mlx5_0", "counters/port_rcv_data", f"{count['words']}\n")

        panel = self.wait_panel(
            lambda p: any(g.startswith("symbol ") for g in p["rows"].get(ib, {}).get("growing", [])),
            "mlx5_0's symbol errors shown as growing", each=more)
        self.screenshot("dashboard-rdma.png")
        row = panel["rows"][ib]
        self.assertEqual(row["counters"], ["symbol_error_total"], row)
        self.assertRegex(row["growing"][0], r"^symbol \d+ \(\+\d+\)$")
        total, grew = map(int, re.match(r"symbol (\d+) \(\+(\d+)\)", row["growing"][0]).groups())
        self.assertGreater(total, 0)
        self.assertTrue(0 < grew <= total, row)
        self.assertRegex(row["cells"]["ERRORS"], r"^symbol \d+ \(\+\d+\)$")
        self.assertEqual(panel["rows"][roce]["growing"], [], panel["rows"][roce])
        self.assertEqual(panel["rows"][roce]["cells"]["ERRORS"], "downed 3")
        # The RoCE port re-trains lower than it came up at (the header's
        # max_rate_gbps): both rates shown.
        sys.port_file(LONG_HCA, "rate", "100 Gb/sec (2X HDR)\n")
        self.wait_panel(lambda p: p["rows"].get(roce, {}).get("cells", {}).get("RATE") == "100 Gb/s of 200 Gb/s",
                        "the RoCE port's lower rate next to the rate it came up at")
        # The page agrees with status on the total once the counter stops.
        stopped = count["errors"]
        panel = self.wait_panel(
            lambda p: p["rows"].get(ib, {}).get("cells", {}).get("ERRORS") == f"symbol {stopped}",
            "mlx5_0's symbol errors, no longer growing, as a plain total")
        self.assertEqual(panel["rows"][ib]["growing"], [])
        p = run(["--sys-root", sys.root, "status"], scenario=scenario_4gpu())
        self.assertIn(f"errors: symbol {stopped}\n", p.stdout)
        self.assertEqual(self.page.errors(), [])

    def test_a_node_without_ports_has_no_panel(self):
        sys_root = os.path.join(self.tmp.name, "sys")
        os.makedirs(os.path.join(sys_root, "class"))
        self.open(sys_root)
        # The page has drawn a sample (the GPU cards) ...
        self.page.wait_for("document.querySelectorAll('#cards .card.gpu').length === 4", timeout=30)
        t0 = self.page.wait_for("Number(document.getElementById('cards').dataset.t)", timeout=30)
        self.page.wait_for(f"Number(document.getElementById('cards').dataset.t) > {t0}", timeout=30)
        panel = self.panel()
        # ... and says nothing about RDMA.
        self.assertFalse(panel["shown"], panel)
        self.assertEqual(panel["rows"], {}, panel)
        self.assertNotIn("RDMA", self.page.evaluate("document.body.innerText"))
        self.assertEqual(self.page.errors(), [])


if __name__ == "__main__":
    unittest.main()
