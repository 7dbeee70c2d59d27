"""`gpudoctor top` end to end in tmux: the real binary on the fake NVML with
real child processes as GPU jobs; the tests read the screen a user sees,
type keys, resize the terminal, and check what happened to the processes."""
import http.server
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import unittest
import urllib.request

from gd_e2e import (E2E, FAKE_NVML, GPUDOCTOR, TRAINER, load_scenario, scenario_4gpu,
                    self_signed_cert, spawn_python, unused_pid, write_scenario)
from gd_tmux import Tmux
from test_hostile_text import HOLDER, HOSTILE_ARGV, HOSTILE_NAMES, spawn as spawn_hostile
from test_export import TRACEGEN
from test_serve import Serve
from test_who_kill import CANARY, Scenario, alive, reap_in_background, spawn, wait_until

GiB = 1 << 30


class CountingProxy:
    """Forwards GET requests on 127.0.0.1 to serve at `port` and counts
    those of /api/v1/status."""

    def __init__(self, port):
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path.startswith("/api/v1/status"):
                    proxy.status_requests += 1
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{self.path}",
                                            timeout=5) as r:
                    body = r.read()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.status_requests = 0
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def top_argv(*args, interval="500ms"):
    return [GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none", "--interval", interval,
            "top"] + list(args)


class TopE2E(E2E):
    def setUp(self):
        super().setUp()
        self.panes = []

    def tearDown(self):
        for p in self.panes:
            p.close()
        super().tearDown()

    def top(self, scenario, *args, width=120, height=40, env=None, interval="500ms"):
        e = {"FAKE_NVML_SCENARIO": scenario, "LANG": "C.UTF-8"}
        e.update(env or {})
        pane = Tmux(self.tmp.name, top_argv(*args, interval=interval), env=e, width=width,
                    height=height)
        self.panes.append(pane)
        return pane

    def trainer(self, workers=2):
        p = spawn_python(TRAINER.format(workers=workers))
        self.children.append(p)
        return [int(x) for x in p.stdout.readline().split(",")]

    def row_of(self, screen, pid):
        """The table row of `pid` (it starts with the GPU and the pid)."""
        for line in screen.split("\n"):
            if re.match(rf"^[ *!]\s+\d*\s+{pid}\s", line):
                return line
        return None

    def pids_in_order(self, screen, pids):
        order = []
        for line in screen.split("\n"):
            m = re.match(r"^[ *!]\s+\d+\s+(\d+)\s", line)
            if m and int(m.group(1)) in pids:
                order.append(int(m.group(1)))
        return order


class TopLive(TopE2E):
    def test_scenario_values_processes_and_findings_on_screen(self):
        job = self.trainer(workers=2)
        path = Scenario(self.tmp.name).write({0: [(job[0], 30 * GiB)]})
        header, samples = load_scenario(path)
        pane = self.top(path)
        s = pane.wait_for(rf"\b{job[0]}\b")
        # The scenario's GPUs and values.
        for g in header["gpus"]:
            name = g["name"].replace("NVIDIA ", "")
            self.assertIn(f" {g['index']} {name}", s)
        g0 = samples[0]["gpus"][0]
        self.assertIn(f"{g0['util_pct']:.0f}%", s)
        self.assertIn(f"{g0['temp_c']}°C/{header['gpus'][0]['temp_slowdown_c']}", s)
        self.assertIn("driver " + header["driver"]["driver_version"], s)
        # The process row: GPU, pid, user, memory, folded workers.
        row = self.row_of(s, job[0])
        self.assertIsNotNone(row, s)
        self.assertIn("30.0 GiB", row)
        self.assertIn("+2 ", row)
        self.assertIn("root", row)
        # The findings strip shows what `diagnose` finds in the scenario.
        self.assertRegex(s, r"INFO persistence-mode-off\s+Persistence mode is off on GPU 3")
        # t shows the workers on their own rows, under their process.
        pane.keys("t")
        s = pane.wait_for(r"└─ /")
        for w in job[1:]:
            self.assertIn(str(w), s)
        # Enter on the finding opens its evidence and action.
        pane.keys("Tab")
        pane.keys("Enter")
        s = pane.wait_for(r"action:")
        self.assertIn("evidence:", s)
        self.assertIn("persistence-mode-off", s)
        pane.keys("Escape")
        pane.keys("q")
        s = pane.wait_for(r"EXIT=\d+")
        self.assertIn("EXIT=0", s)

    def test_sort_and_filters_change_the_rows(self):
        a = self.trainer(workers=0)
        b = self.trainer(workers=0)
        c = self.trainer(workers=0)
        path = Scenario(self.tmp.name).write(
            {0: [(a[0], 10 * GiB), (b[0], 30 * GiB)], 1: [(c[0], 20 * GiB)]})
        pane = self.top(path)
        pids = {a[0], b[0], c[0]}
        s = pane.wait_for(lambda t: len(self.pids_in_order(t, pids)) == 3)
        # GPU memory, largest first, by default.
        self.assertEqual(self.pids_in_order(s, pids), [b[0], c[0], a[0]])
        pane.keys("r")
        s = pane.wait_for(lambda t: self.pids_in_order(t, pids) == [a[0], c[0], b[0]])
        self.assertIn("GPU-MEM▲", s)
        # Sort by PID: s cycles the columns (GPU-MEM -> SM% -> CPU% -> ...),
        # < goes back: GPU-MEM -> USER -> PID.
        pane.keys("<", "<")
        s = pane.wait_for(r"PID▲")
        self.assertEqual(self.pids_in_order(s, pids), sorted(pids))
        # GPU filter: g cycles 0, 1, ...
        pane.keys("g")
        s = pane.wait_for(lambda t: self.pids_in_order(t, pids) == sorted([a[0], b[0]]))
        self.assertIn("GPU filter: 0", s)
        pane.keys("g")
        pane.wait_for(lambda t: self.pids_in_order(t, pids) == [c[0]])
        # Text filter: the pid.
        pane.keys("Escape")
        pane.keys("/")
        pane.type(str(a[0]))
        pane.keys("Enter")
        pane.wait_for(lambda t: self.pids_in_order(t, pids) == [a[0]])
        pane.keys("Escape")
        pane.wait_for(lambda t: len(self.pids_in_order(t, pids)) == 3)

    def test_kill_after_confirmation_shows_the_memory_result(self):
        job = self.trainer(workers=1)
        self.addCleanup(lambda: [os.kill(p, signal.SIGKILL) for p in job if alive(p)])
        reap_in_background(self.children[-1])
        # NVML lists the trainer until 8 s after top starts (its memory is
        # freed once it has ended).
        path = Scenario(self.tmp.name).write({0: [(job[0], 20 * GiB)]}, later=[(8.0, {})])
        pane = self.top(path, "--kill-timeout", "12s")
        pane.wait_for(rf"\b{job[0]}\b")
        pane.keys("/")
        pane.type(str(job[0]))
        pane.keys("Enter")
        pane.keys("k")
        s = pane.wait_for(r"Proceed\?")
        # One rule with `gpudoctor kill`: SIGKILL only when asked (f, --force).
        self.assertIn("Will send SIGTERM to 1 process(es):", s)
        self.assertIn("Proceed? y = send SIGTERM", s)
        self.assertIn("f = send SIGTERM, then SIGKILL to what is left after 12s", s)
        self.assertIn(str(job[0]), s)
        self.assertTrue(alive(job[0]), "nothing is sent before the yes")
        pane.keys("y")
        s = pane.wait_for(r"GPU memory released", timeout=30)
        self.assertIn(f"sent SIGTERM to {job[0]}", s)
        self.assertRegex(s, r"GPU 0: used [0-9.]+ GiB before, [0-9.]+ (MiB|GiB) now")
        self.assertTrue(wait_until(lambda: not alive(job[0])))
        # A no leaves everything alive.
        other = self.trainer(workers=0)
        path2 = Scenario(self.tmp.name).write({0: [(other[0], GiB)]})
        pane2 = self.top(path2)
        pane2.wait_for(rf"\b{other[0]}\b")
        pane2.keys("/")
        pane2.type(str(other[0]))
        pane2.keys("Enter", "k")
        pane2.wait_for(r"Proceed\?")
        pane2.keys("n")
        pane2.wait_for(r"h help")
        time.sleep(0.5)
        self.assertTrue(alive(other[0]))

    def test_a_mouse_click_selects_the_row_k_acts_on(self):
        a = self.trainer(workers=0)
        b = self.trainer(workers=0)
        path = Scenario(self.tmp.name).write({0: [(a[0], 4 * GiB)], 1: [(b[0], 2 * GiB)]})
        pane = self.top(path, env={"TERM": "xterm-256color"})
        s = pane.wait_for(lambda t: self.row_of(t, a[0]) and self.row_of(t, b[0]))
        first = self.pids_in_order(s, [a[0], b[0]])[0]
        other = b[0] if first == a[0] else a[0]
        row = next(i for i, line in enumerate(s.split("\n")) if self.row_of(line, other))
        # A left click on the other row, as a terminal whose terminfo entry is
        # xterm-256color reports it (what ncurses asks it for: SGR, mode
        # 1006: ESC [ < button ; column ; row M, then m on release; 1-based).
        pane.type(f"\x1b[<0;6;{row + 1}M\x1b[<0;6;{row + 1}m")
        time.sleep(0.3)
        pane.keys("k")
        s = pane.wait_for(r"Proceed\?")
        listed = s[s.index("Will send"):s.index("Proceed?")]
        self.assertIn(f" {other} ", listed)
        self.assertNotIn(f" {first} ", listed)
        pane.keys("n")
        pane.wait_for(r"h help")
        self.assertTrue(alive(a[0]) and alive(b[0]))

    def test_kill_of_pid_one_or_a_bystander_is_refused(self):
        log = os.path.join(self.tmp.name, "canary.log")
        canary = spawn(CANARY, log)
        self.children.append(canary)
        cpid = int(canary.stdout.readline())
        # NVML lists PID 1 on GPU 1 throughout, and the canary on GPU 2 only
        # for the first 6 s: by the time k plans, it is a bystander.
        s0 = {1: [(1, GiB)], 2: [(cpid, GiB)]}
        path = Scenario(self.tmp.name).write(s0, later=[(6.0, {1: [(1, GiB)]})])
        pane = self.top(path)
        pane.wait_for(rf"\b{cpid}\b")
        pane.keys("/")
        pane.type(str(cpid))
        pane.keys("Enter")
        # (PID 1 stays: the filter also keeps a process whose worker matches,
        # and everything descends from PID 1.) End selects the canary.
        pane.wait_for(lambda t: self.pids_in_order(t, {1, cpid}) == [1, cpid])
        pane.keys("End", "Space")  # tagged while NVML still listed it
        pane.wait_for(lambda t: (self.row_of(t, cpid) or "").startswith("*"))
        pane.keys("\\")
        pane.wait_for(lambda t: self.row_of(t, cpid) is None)
        pane.keys("k")
        s = pane.wait_for(r"Refused, nothing was sent")
        self.assertIn("not a GPU process nor a descendant of one", s)
        pane.keys("Escape")
        # PID 1, selected in the table.
        pane.keys("Escape")  # clears the tag
        pane.keys("/")
        pane.type("1")
        pane.keys("Enter")
        pane.wait_for(lambda t: self.row_of(t, 1) is not None)
        pane.keys("Home", "k")
        s = pane.wait_for(r"Refused, nothing was sent")
        self.assertIn("PID 1 (init) is never signalled", s)
        self.assertTrue(alive(cpid))
        self.assertFalse(os.path.exists(log), "the canary received a signal")

    def test_who_details_and_monochrome(self):
        a = self.trainer(workers=0)
        b = self.trainer(workers=0)
        gone = unused_pid()
        path = Scenario(self.tmp.name).write(
            {0: [(a[0], 10 * GiB), (gone, 3 * GiB)], 1: [(b[0], 20 * GiB)]})
        pane = self.top(path, env={"NO_COLOR": "1"})
        s = pane.wait_for(lambda t: self.row_of(t, a[0]) and self.row_of(t, b[0]))
        # NO_COLOR: no colour in what reaches the terminal (attributes only).
        ansi = pane.tmux("capture-pane", "-p", "-e", "-t", "t").stdout
        self.assertNotRegex(ansi, r"\x1b\[[0-9;]*3[0-7]m")
        self.assertRegex(ansi, r"\x1b\[[0-9;]*7m")  # reverse video headings
        pane.keys("/")
        pane.type(str(a[0]))
        pane.keys("Enter", "d")
        s = pane.wait_for(r"Process details")
        self.assertIn(f"PID {a[0]}", s)
        pane.keys("Escape")
        # w: who holds the selected process's GPU, every byte explained.
        pane.keys("w")
        # tmux can capture the pane while top is still redrawing it (the title
        # already there, the rows not yet): wait for the account's last line.
        s = pane.wait_for(lambda t: "Who holds GPU 0" in t and "= used, as NVML reports it" in t)
        self.assertIn(str(a[0]), s)
        self.assertIn(str(gone), s)
        self.assertIn("missing", s)
        self.assertIn("= used, as NVML reports it", s)

    def test_readonly_refuses_kill(self):
        job = self.trainer(workers=0)
        path = Scenario(self.tmp.name).write({0: [(job[0], GiB)]})
        pane = self.top(path, "--readonly")
        s = pane.wait_for(rf"\b{job[0]}\b")
        self.assertIn("[read-only]", s)
        self.assertNotIn("k kill", s)
        pane.keys("k")
        pane.wait_for(r"read-only: started with --readonly")
        self.assertTrue(alive(job[0]))

    def test_resize_80x24_and_200x60(self):
        job = self.trainer(workers=0)
        path = Scenario(self.tmp.name).write({0: [(job[0], 3 * GiB)]})
        # One sample an hour: each resize must redraw by itself, not with
        # the next sample.
        pane = self.top(path, width=120, height=40, interval="1h")
        pane.wait_for(rf"\b{job[0]}\b")
        for w, h in ((80, 24), (200, 60), (80, 24)):
            pane.resize(w, h)
            s = pane.wait_for(lambda t: len(t.rstrip("\n").split("\n")) == h and
                              t.startswith("gpudoctor top") and
                              len(t.split("\n")[0]) == w)
            lines = s.rstrip("\n").split("\n")
            self.assertEqual(len(lines), h)
            self.assertTrue(lines[0].startswith("gpudoctor top"), s)
            self.assertIn(str(job[0]), s)
            for i in range(4):
                self.assertRegex(s, rf"\n {i} (A100|H100)")
            if h == 60:
                self.assertIn("charts: util / memory", s)
                self.assertIn("CONTAINER", s)
            else:
                self.assertNotIn("charts:", s)

    def test_a_frame_reaches_the_terminal_in_one_write_or_a_few(self):
        # Over ssh every write to the terminal is a packet; ncurses 6.4 wrote
        # a frame as one small write per cursor move (~40 a frame) until its
        # screen had once been resumed. Counted with the kernel's tally of
        # the process's write calls (/proc/PID/io syscw), frames at 2 Hz with
        # the charts scrolling.
        job = self.trainer(workers=0)
        path = Scenario(self.tmp.name).write({0: [(job[0], 3 * GiB)]})
        pane = self.top(path, width=200, height=60, interval="500ms")
        pane.wait_for("charts: util / memory")
        pid = pane.program_pid()

        def writes():
            with open(f"/proc/{pid}/io") as f:
                return int(next(l for l in f if l.startswith("syscw:")).split()[1])

        w0, t0 = writes(), time.monotonic()
        time.sleep(3)
        per_second = (writes() - w0) / (time.monotonic() - t0)
        # 2 frames a second, each one write or a few; a GPU worker's wake-up
        # is a write too.
        self.assertLess(per_second, 12, f"{per_second:.1f} writes a second")

    def test_hostile_names_never_reach_the_terminal_raw(self):
        pids = []
        for i, name in enumerate(HOSTILE_NAMES):
            argv0 = HOSTILE_ARGV[i % len(HOSTILE_ARGV)] + b"python"
            p = spawn_hostile(HOLDER, argv0, HOSTILE_ARGV, name.hex())
            self.children.append(p)
            pids.append(int(p.stdout.readline()))
        path = Scenario(self.tmp.name).write({0: [(p, GiB) for p in pids]})
        pane = self.top(path, width=200, height=60)
        s = pane.wait_for(lambda t: all(str(p) in t for p in pids))
        # Each process is one row, the forged row is not a row, escapes are
        # shown as text.
        for p in pids:
            self.assertIsNotNone(self.row_of(s, p), s)
        self.assertNotRegex(s, r"(?m)^0\s+4242\s")
        self.assertIn("\\e[2J", s)
        self.assertIn("\\e]0;pwned-title\\x07", s)
        self.assertIn("\\xff", s)
        self.assertNotEqual(pane.title(), "pwned-title")
        # The details of the one whose name has a bidi override, with its
        # whole command line.
        pane.keys("/")
        pane.type(str(pids[-1]))
        pane.keys("Enter", "d")
        s = pane.wait_for(r"command line:")
        self.assertIn(f"PID {pids[-1]}  \\u202erlo", s)
        self.assertIn("\\e]0;pwned-title\\x07", s)
        self.assertIn("\\u202eevil\\u202c", s)
        self.assertNotEqual(pane.title(), "pwned-title")

    def test_terminal_restored_on_quit_sigterm_and_crash(self):
        path = Scenario(self.tmp.name).write({})
        for sig, status in ((None, "EXIT=0"), (signal.SIGTERM, "EXIT=0"),
                            (signal.SIGSEGV, "EXIT=139"), (signal.SIGABRT, "EXIT=134")):
            pane = self.top(path)
            pane.wait_for(r"h help")
            if sig is None:
                pane.keys("q")
            else:
                os.kill(pane.program_pid(), sig)
            s = pane.wait_for(r"EXIT=\d+\s+speed \d+ baud")
            self.assertIn(status, s, f"{sig}: {s}")
            # Out of the alternate screen, modes back: echo and canonical
            # input on, the cursor shown.
            self.assertNotIn("h help", s, f"{sig}: still on top's screen")
            self.assertRegex(s, r"(?<!-)\becho\b", f"{sig}: {s}")
            self.assertRegex(s, r"(?<!-)\bicanon\b", f"{sig}: {s}")

    def test_hung_gpu_greys_its_panel_and_the_screen_goes_on(self):
        header, samples = load_scenario(scenario_4gpu())
        # GPU 2's utilisation read hangs for 30 s from scenario time 2 s.
        header["faults"] = [{"function": "nvmlDeviceGetUtilizationRates", "gpu": 2,
                             "hang_s": 30, "after_s": 2}]
        path = write_scenario(header, samples, self.tmp.name)
        # The deadline also bounds loading NVML: 300 ms was once too short
        # for the sanitizer build on a loaded machine ("no NVML (error)").
        pane = Tmux(self.tmp.name, [GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none",
                                    "--interval", "500ms", "--deadline", "1s", "top"],
                    env={"FAKE_NVML_SCENARIO": path, "LANG": "C.UTF-8"})
        self.panes.append(pane)
        s = pane.wait_for(r"STALE: no answer within the deadline", timeout=20)
        # The clock in the header keeps moving, and keys still work.
        clock = re.search(r"\d\d:\d\d:\d\d", s.split("\n")[0]).group(0)
        pane.wait_for(lambda t: re.search(r"\d\d:\d\d:\d\d", t.split("\n")[0]).group(0) != clock)
        pane.keys("h")
        pane.wait_for(r"reverse the sort")


class TopSources(TopE2E):
    def test_connect_to_a_running_serve(self):
        job = self.trainer(workers=1)
        path = Scenario(self.tmp.name).write({1: [(job[0], 7 * GiB)]})
        serve = Serve(path, ["--no-db"])
        self.addCleanup(serve.kill)
        # A scenario this top's own NVML does not have: what it shows comes
        # from serve.
        pane = Tmux(self.tmp.name, top_argv("--connect", f"http://127.0.0.1:{serve.port}"),
                    env={"FAKE_NVML_SCENARIO": "/nonexistent", "LANG": "C.UTF-8"})
        self.panes.append(pane)
        s = pane.wait_for(rf"\b{job[0]}\b", timeout=20)
        self.assertIn(f"remote http://127.0.0.1:{serve.port}", s)
        self.assertIn("7.0 GiB", self.row_of(s, job[0]))
        self.assertIn(" 3 H100", s)
        pane.wait_for(r"persistence-mode-off|no findings — serve's alerts", timeout=20)
        # This serve was started without --allow-remote-kill: k says so, in
        # serve's words, and nothing is sent.
        pane.keys("/")
        pane.type(str(job[0]))
        pane.keys("Enter", "k")
        s = pane.wait_for(r"serve refused \(HTTP 403\)")
        self.assertIn("remote kill is off on this serve: start it with --allow-remote-kill", s)
        self.assertTrue(alive(job[0]))
        pane.keys("Escape")
        # serve going away is said on the screen; top stays up.
        serve.proc.terminate()
        serve.proc.wait()
        pane.wait_for(r"!! cannot reach http://127.0.0.1")
        pane.keys("q")
        self.assertIn("EXIT=0", pane.wait_for(r"EXIT=\d+"))

    def test_connect_polls_at_serves_own_interval_unless_told(self):
        # serve samples every 200 ms (test_serve.Serve); a proxy in front of
        # it counts top's status requests. Without --interval top asks at
        # serve's pace; with --interval 2s, every 2 s.
        path = Scenario(self.tmp.name).write({})
        serve = Serve(path, ["--no-db"])
        self.addCleanup(serve.kill)
        proxy = CountingProxy(serve.port)
        self.addCleanup(proxy.stop)
        env = {"FAKE_NVML_SCENARIO": "/nonexistent", "LANG": "C.UTF-8"}
        counts = {}
        for interval in (None, "2s"):
            argv = [GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none"]
            argv += ["--interval", interval] if interval else []
            argv += ["top", "--connect", f"http://127.0.0.1:{proxy.port}"]
            pane = Tmux(self.tmp.name, argv, env=env)
            self.panes.append(pane)
            pane.wait_for(r"remote http://127\.0\.0\.1", timeout=20)
            before = proxy.status_requests
            time.sleep(4)
            counts[interval] = proxy.status_requests - before
            pane.keys("q")
            self.assertIn("EXIT=0", pane.wait_for(r"EXIT=\d+"))
        self.assertGreaterEqual(counts[None], 8, counts)
        self.assertLessEqual(counts["2s"], 3, counts)

    def test_connect_over_https_trusts_the_ca_file(self):
        job = self.trainer(workers=1)
        path = Scenario(self.tmp.name).write({1: [(job[0], 7 * GiB)]})
        crt, key = self_signed_cert(self.tmp.name)
        cfg = os.path.join(self.tmp.name, "tls.yml")
        with open(cfg, "w") as f:
            f.write(f"tls_server_config:\n  cert_file: {crt}\n  key_file: {key}\n")
        serve = Serve(path, ["--no-db", "--web-config", cfg])
        self.addCleanup(serve.kill)
        url = f"https://127.0.0.1:{serve.port}"
        env = {"FAKE_NVML_SCENARIO": "/nonexistent", "LANG": "C.UTF-8"}
        # A self-signed serve is not trusted by the system's CAs: said, with
        # what to do.
        untrusted = Tmux(self.tmp.name, top_argv("--connect", url), env=env)
        self.panes.append(untrusted)
        s = untrusted.wait_for(r"!! cannot reach https://127\.0\.0\.1", timeout=20)
        self.assertIn("certificate is not trusted", s)
        untrusted.keys("q")
        self.assertIn("EXIT=0", untrusted.wait_for(r"EXIT=\d+"))
        # Given serve's certificate, top shows the node.
        pane = Tmux(self.tmp.name, top_argv("--connect", url, "--ca-file", crt), env=env)
        self.panes.append(pane)
        s = pane.wait_for(rf"\b{job[0]}\b", timeout=20)
        self.assertIn(f"remote {url}", s)
        self.assertIn("7.0 GiB", self.row_of(s, job[0]))
        pane.keys("q")
        # Usage errors: a CA file for a plain http URL, or one not readable.
        for args, message in (
                (["--connect", f"http://127.0.0.1:{serve.port}", "--ca-file", crt],
                 "--ca-file is for an https:// --connect"),
                (["--connect", url, "--ca-file", crt + ".missing"], "cannot read it"),
                (["--ca-file", crt], "--ca-file is for --connect")):
            p = subprocess.run([GPUDOCTOR, "top"] + args, capture_output=True, text=True,
                               timeout=30)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(message, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)

    def test_from_replay_pause_speed_seek(self):
        trace = os.path.join(self.tmp.name, "input-bound.jsonl")
        subprocess.run([TRACEGEN, "--scenario", "input-bound", "--duration", "5m", "-o", trace],
                       check=True)
        pane = Tmux(self.tmp.name, [GPUDOCTOR, "top", "--from", trace, "--speed", "8"],
                    env={"LANG": "C.UTF-8"})
        self.panes.append(pane)
        s = pane.wait_for(r"replay x8")
        self.assertIn("node07", s)
        # The findings strip shows the trace's finding.
        pane.wait_for(r"WARN input-bound\s+GPU 0 is held back by its data loader", timeout=30)
        pane.keys("Space")
        s = pane.wait_for(r"replay PAUSED")
        pos = re.search(r"replay PAUSED x8 \+(\S+)\]", s).group(1)
        time.sleep(1.5)
        self.assertIn(f"+{pos}]", pane.screen(), "paused: the position stays")
        pane.keys("Right", "Right", "Right")
        pane.wait_for(lambda t: f"+{pos}]" not in t)
        pane.keys("+")
        pane.wait_for(r"replay PAUSED x16")
        pane.keys("-", "-")
        pane.wait_for(r"replay PAUSED x4")
        pane.keys("End")
        pane.keys("k")
        pane.wait_for(r"read-only: a replay shows a recording")
        pane.keys("Space")
        pane.wait_for(r"replay x4")


# bcrypt of "s3cret pass" (cost 4, so the test is quick).
BCRYPT_HASH = "$2b$04$abcdefghijklmnopqrstuuoBpIrM0OnplXjsOI8DWYJTHUhJDuUv."


class TopRemoteKill(TopE2E):
    """k over --connect: serve (with --allow-remote-kill and basic auth)
    ends the process on its node, through the checks of `gpudoctor kill`."""

    def serve(self, scenario, *extra):
        cfg = os.path.join(self.tmp.name, "web.yml")
        with open(cfg, "w") as f:
            f.write(f"basic_auth_users:\n  ops: '{BCRYPT_HASH}'\n")
        s = Serve(scenario, ["--no-db", "--web-config", cfg] + list(extra), self.tmp.name)
        self.addCleanup(s.kill)
        return s

    def connect(self, serve, *args):
        auth = os.path.join(self.tmp.name, "auth")
        with open(auth, "w") as f:
            f.write("ops:s3cret pass\n")
        # This top's own NVML has no scenario: what it shows and ends is
        # serve's.
        pane = Tmux(self.tmp.name,
                    top_argv("--connect", f"http://127.0.0.1:{serve.port}", "--auth-file",
                             auth, *args),
                    env={"FAKE_NVML_SCENARIO": "/nonexistent", "LANG": "C.UTF-8"})
        self.panes.append(pane)
        return pane

    def select(self, pane, pid):
        pane.wait_for(rf"\b{pid}\b", timeout=20)
        pane.keys("/")
        pane.type(str(pid))
        pane.keys("Enter")

    def test_kill_after_confirmation_shows_the_memory_result(self):
        job = self.trainer(workers=1)
        self.addCleanup(lambda: [os.kill(p, signal.SIGKILL) for p in job if alive(p)])
        reap_in_background(self.children[-1])
        # serve's NVML lists the trainer until 15 s after serve starts.
        path = Scenario(self.tmp.name).write({0: [(job[0], 20 * GiB)]}, later=[(15.0, {})])
        serve = self.serve(path, "--allow-remote-kill")
        pane = self.connect(serve, "--kill-timeout", "20s")
        self.select(pane, job[0])
        pane.keys("k")
        s = pane.wait_for(r"Proceed\?", timeout=20)
        self.assertIn(f"On the node of http://127.0.0.1:{serve.port}, by its gpudoctor serve", s)
        self.assertIn("Will send SIGTERM to 1 process(es):", s)
        self.assertIn("f = send SIGTERM, then SIGKILL to what is left after 20s", s)
        self.assertRegex(s, rf"{job[0]}\s+\S+\s+S\s+GPU process on GPU 0\s+20\.0 GiB")
        self.assertTrue(alive(job[0]), "nothing is sent before the yes")
        pane.keys("y")
        s = pane.wait_for(r"GPU memory released", timeout=60)
        self.assertIn(f"sent SIGTERM to {job[0]}", s)
        self.assertRegex(s, r"GPU 0: used [0-9.]+ GiB before, [0-9.]+ (MiB|GiB) now")
        self.assertTrue(wait_until(lambda: not alive(job[0])))
        serve.wait_log(rf'msg="remote kill" client=127.0.0.1 user=ops status=200 '
                       rf'dry_run=false pids={job[0]} .*signals_sent=1 exit_code=0')
        # A no leaves everything alive.
        other = self.trainer(workers=0)
        path2 = Scenario(self.tmp.name).write({0: [(other[0], GiB)]})
        serve2 = self.serve(path2, "--allow-remote-kill")
        pane2 = self.connect(serve2)
        self.select(pane2, other[0])
        pane2.keys("k")
        pane2.wait_for(r"Proceed\?", timeout=20)
        pane2.keys("n")
        pane2.wait_for(r"h help")
        time.sleep(0.5)
        self.assertTrue(alive(other[0]))
        self.assertFalse(any("dry_run=false" in l for l in serve2.log()),
                         "a no sent the kill")

    def test_kill_of_pid_one_or_a_bystander_is_refused(self):
        log = os.path.join(self.tmp.name, "canary.log")
        canary = spawn(CANARY, log)
        self.children.append(canary)
        cpid = int(canary.stdout.readline())
        # serve's NVML lists PID 1 on GPU 1 throughout, and the canary on
        # GPU 2 only for the first 6 s: by the time k plans, it is a
        # bystander.
        s0 = {1: [(1, GiB)], 2: [(cpid, GiB)]}
        path = Scenario(self.tmp.name).write(s0, later=[(6.0, {1: [(1, GiB)]})])
        serve = self.serve(path, "--allow-remote-kill")
        pane = self.connect(serve)
        self.select(pane, cpid)
        pane.wait_for(lambda t: self.pids_in_order(t, {1, cpid}) == [1, cpid])
        pane.keys("End", "Space")  # tagged while NVML still listed it
        pane.wait_for(lambda t: (self.row_of(t, cpid) or "").startswith("*"))
        pane.keys("\\")
        pane.wait_for(lambda t: self.row_of(t, cpid) is None, timeout=20)
        pane.keys("k")
        s = pane.wait_for(r"Refused, nothing was sent", timeout=20)
        self.assertIn("not a GPU process nor a descendant of one", s)
        self.assertNotIn("Proceed?", s)
        pane.keys("Escape")
        pane.keys("Escape")  # clears the tag
        pane.keys("/")
        pane.type("1")
        pane.keys("Enter")
        pane.wait_for(lambda t: self.row_of(t, 1) is not None)
        pane.keys("Home", "k")
        s = pane.wait_for(r"Refused, nothing was sent", timeout=20)
        self.assertIn("PID 1 (init) is never signalled", s)
        pane.keys("y")  # a yes to a refused plan sends nothing
        time.sleep(1)
        self.assertTrue(alive(cpid))
        self.assertFalse(os.path.exists(log), "the canary received a signal")
        self.assertFalse(any("dry_run=false" in l for l in serve.log()))

    def test_readonly_refuses_kill_over_connect_too(self):
        job = self.trainer(workers=0)
        path = Scenario(self.tmp.name).write({0: [(job[0], GiB)]})
        serve = self.serve(path, "--allow-remote-kill")
        pane = self.connect(serve, "--readonly")
        s = pane.wait_for(rf"\b{job[0]}\b", timeout=20)
        self.assertIn("[read-only]", s)
        self.assertNotIn("k kill", s)
        pane.keys("k")
        pane.wait_for(r"read-only: started with --readonly")
        time.sleep(0.5)
        self.assertTrue(alive(job[0]))
        self.assertFalse(any('msg="remote kill"' in l for l in serve.log()),
                         "a read-only top asked serve")

if __name__ == "__main__":
    unittest.main()
