"""Untrusted text made harmless, end to end: real processes whose names and
command lines carry terminal control sequences, forged rows, invalid UTF-8
and bidi overrides sit on the fake NVML's GPUs; every text view must print
them inert, one row each. Then 12 GPU processes with ~1 MiB command lines
(one with a secret in it) against `gpudoctor serve`: memory and reply size
stay bounded, and the secret is redacted unless --show-cmdline full."""
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest

from gd_e2e import RSS_LIMIT_FACTOR, RSS_SANITIZER_QUARANTINE, E2E, FAKE_NVML, GPUDOCTOR, kill_tree, load_scenario, scenario_4gpu, write_scenario
from test_serve import Serve, parse_metrics

GiB = 1024 ** 3
MiB = 1024 ** 2

# Pieces of hostile text, as bytes (argv and comm are bytes on Linux).
CLEAR = b"\x1b[2J"
TITLE = b"\x1b]0;pwned-title\x07"
ASK = b"\x1b[6n"
FORGED = b"\n0    4242             root        99.0 GiB  FORGED-ROW"
C1_CSI = b"\x9b" + b"31m"
BAD_UTF8 = b"\xff\xfe\xc0\xaf\xed\xa0\x80"
BIDI = b"\xe2\x80\xaeevil\xe2\x80\xac"
HOSTILE_ARGV = [CLEAR, TITLE, ASK, b"a\rb\bc", FORGED, C1_CSI, BAD_UTF8, BIDI]
# comm is at most 15 bytes: one hostile name per process.
HOSTILE_NAMES = [b"\x1b[2Jx", b"\x1b]0;t\x07", b"\x1b[6n", b"\nFORGED-ROW",
                 b"\x9b" + b"31m\r\b", b"\xff\xc0\xaf", b"\xe2\x80\xaerlo"]

# Sets its own comm (prctl PR_SET_NAME) and waits; its argv is what the
# test exec'ed it with.
HOLDER = r"""
import ctypes, os, sys, time
ctypes.CDLL(None).prctl(15, ctypes.c_char_p(bytes.fromhex(sys.argv[1])), 0, 0, 0)
print(os.getpid(), flush=True)
time.sleep(300)
"""

# A parent whose child renames itself and exits unreaped: a zombie with a
# hostile comm holding GPU memory (orphaned-memory names it in diagnose).
ZOMBIE_PARENT = r"""
import ctypes, os, sys, time
pid = os.fork()
if pid == 0:
    ctypes.CDLL(None).prctl(15, ctypes.c_char_p(bytes.fromhex(sys.argv[1])), 0, 0, 0)
    os._exit(0)
print(f"{os.getpid()},{pid}", flush=True)
time.sleep(300)
"""

BIDI_CONTROLS = {0x061C, 0x200E, 0x200F, 0x2028, 0x2029} | set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))


def spawn(code, argv0, extra, name_hex):
    """A real process running `code` with argv[0] = argv0 and `extra` args
    after the name (all bytes)."""
    args = [argv0, b"-c", code.encode(), name_hex.encode()] + list(extra)
    return subprocess.Popen(args, executable=sys.executable, stdout=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)


def run_bytes(args, scenario, timeout=60):
    env = dict(os.environ, FAKE_NVML_SCENARIO=scenario)
    cmd = [GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none"] + list(args)
    return subprocess.run(cmd, env=env, capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def scenario_with(tmpdir, pids_bytes, samples=1):
    """The 4-GPU scenario with `pids_bytes` [(pid, bytes)] on GPU 0."""
    header, all_samples = load_scenario(scenario_4gpu())
    out = []
    for s in all_samples[:samples]:
        s = json.loads(json.dumps(s))
        for g in s["gpus"]:
            plist = pids_bytes if g["index"] == 0 else []
            g["processes"] = [{"pid": p, "used_bytes": b, "type": "compute"} for p, b in plist]
            g["mem_used_bytes"] = sum(b for _, b in plist) + 300 * MiB
        out.append(s)
    return write_scenario(header, out, tmpdir)


class HostileE2E(E2E):
    def setUp(self):
        # A missing prerequisite fails, it never skips.
        self.assertTrue(FAKE_NVML and os.path.exists(FAKE_NVML),
                        "fake libnvidia-ml.so.1 not built (FAKE_NVML_LIB)")
        super().setUp()

    def assert_inert(self, what, out):
        """`out` (bytes) has nothing a terminal acts on: valid UTF-8, no C0
        but the line ends, no DEL, no C1, no bidi controls."""
        for i, b in enumerate(out):
            if (b < 0x20 and b != 0x0A) or b == 0x7F:
                self.fail(f"{what}: control byte 0x{b:02x} at {i}: {out[max(0, i - 40):i + 40]!r}")
        try:
            text = out.decode("utf-8")
        except UnicodeDecodeError as e:
            self.fail(f"{what}: invalid UTF-8: {e}: {out[max(0, e.start - 40):e.start + 40]!r}")
        for i, ch in enumerate(text):
            cp = ord(ch)
            if 0x80 <= cp <= 0x9F or cp in BIDI_CONTROLS:
                self.fail(f"{what}: control U+{cp:04X} at {i}: {text[max(0, i - 40):i + 40]!r}")
        return text


class HostileText(HostileE2E):
    def setUp(self):
        super().setUp()
        self.pids = []
        for i, name in enumerate(HOSTILE_NAMES):
            argv0 = HOSTILE_ARGV[i % len(HOSTILE_ARGV)] + b"python"
            p = spawn(HOLDER, argv0, HOSTILE_ARGV, name.hex())
            self.children.append(p)
            self.pids.append(int(p.stdout.readline()))
        zp = spawn(ZOMBIE_PARENT, b"parent" + CLEAR + FORGED, HOSTILE_ARGV, (b"\x1b[2J\nFORGED").hex())
        self.children.append(zp)
        self.zparent, self.zombie = [int(x) for x in zp.stdout.readline().split(b",")]
        self.gpu_pids = self.pids + [self.zombie]
        self.scenario = scenario_with(self.tmp.name, [(p, GiB) for p in self.gpu_pids])

    def assert_one_row_each(self, what, text):
        # Forged text may only appear inside the row of the process it
        # belongs to, never as a row of its own.
        for line in text.split("\n"):
            if "FORGED-ROW" in line or "FORGED" in line:
                self.assertTrue(any(str(p) in line for p in self.gpu_pids + [self.zparent]),
                                f"{what}: forged row: {line!r}")

    def check(self, what, args, rows=True):
        p = run_bytes(args, self.scenario)
        self.assertIn(p.returncode, (0, 1, 2, 3, 4), f"{what}: {p.stderr!r}")
        text = self.assert_inert(what, p.stdout)
        self.assert_inert(what + " (stderr)", p.stderr)
        self.assert_one_row_each(what, text)
        return text

    def test_ps(self):
        text = self.check("ps", ["ps"])
        for pid in self.pids:
            rows = [l for l in text.split("\n") if l.startswith("0 ") and f" {pid} " in l]
            self.assertEqual(len(rows), 1, f"pid {pid}: {text}")
        self.assertIn("\\e[2J", text)  # made visible, not dropped

    def test_ps_tree(self):
        self.check("ps --tree", ["ps", "--tree"])

    def test_ps_columns_still_align(self):
        text = self.check("ps", ["ps"])
        header = text.split("\n")[0]
        col = header.index("GPU-MEM") + len("GPU-MEM")
        for pid in self.pids:
            row = next(l for l in text.split("\n") if l.startswith("0 ") and f" {pid} " in l)
            # GPU-MEM is right-aligned: "1.0 GiB" ends where the header ends.
            self.assertEqual(row[col - len("1.0 GiB"):col], "1.0 GiB", row)

    def test_who(self):
        text = self.check("who", ["who", "0"])
        self.assertIn(f"parent {self.zparent} (", text)

    def test_kill_dry_run(self):
        self.check("kill --dry-run", ["kill", "--dry-run", "--yes"] + [str(p) for p in self.pids])

    def test_diagnose_live(self):
        text = self.check("diagnose", ["--interval", "250ms", "diagnose", "--duration", "1s"])
        self.assertIn("orphaned-memory", text)
        self.assertIn("\\e[2J\\nFORGED", text)  # the zombie's comm, visible

    def test_checklist(self):
        self.check("diagnose --checklist", ["diagnose", "--checklist"])


def vm_rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def header_flood(host, port, headers=40000):
    """One request of `headers` headers; the reply (431) or a hang-up is fine."""
    request = (b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
               b"".join(b"X-Flood-%d: %s\r\n" % (i, b"v" * 48) for i in range(headers)) +
               b"\r\n")
    try:
        with socket.create_connection((host, port), timeout=20) as c:
            try:
                c.sendall(request)
                c.recv(64)
            except OSError:
                pass  # refused mid-request
    except OSError:
        pass


def huge_argv(tag):
    """~1 MiB of argv in 120 KiB arguments (one argument may not exceed
    128 KiB on Linux)."""
    return [tag] + [(b"x" * (120 * 1024 - 1)) for _ in range(9)]


class HostileServe(HostileE2E):
    def setUp(self):
        super().setUp()
        self.pids = []
        for i in range(12):
            extra = huge_argv(b"--api-key=sk-123" if i == 0 else b"--rank=%d" % i)
            p = spawn(HOLDER, b"python3", extra, b"trainer".hex())
            self.children.append(p)
            self.pids.append(int(p.stdout.readline()))
        self.scenario = scenario_with(self.tmp.name, [(p, GiB) for p in self.pids])

    def serve(self, args=()):
        s = Serve(self.scenario, ["--no-db"] + list(args), tmp=self.tmp.name)
        self.addCleanup(lambda: (s.proc.send_signal(signal.SIGTERM), s.proc.wait(10)))
        return s

    def test_memory_and_reply_size_bounded_and_secret_redacted(self):
        s = self.serve()
        # The Serve helper samples every 200 ms: ~100 samples in 20 s. Half
        # way, 16 clients send requests of 40,000 headers each: the two
        # attacks together must still leave serve small. The peak is watched,
        # not only the end.
        peak = [0]
        stop = threading.Event()

        def watch():
            while not stop.is_set():
                peak[0] = max(peak[0], vm_rss_bytes(s.proc.pid))
                time.sleep(0.05)

        watcher = threading.Thread(target=watch)
        watcher.start()
        time.sleep(10)
        floods = [threading.Thread(target=header_flood, args=(s.host, s.port)) for _ in range(16)]
        for t in floods:
            t.start()
        for t in floods:
            t.join(60)
        time.sleep(10)
        stop.set()
        watcher.join()
        rss = max(peak[0], vm_rss_bytes(s.proc.pid))
        code, _, status = s.get("/api/v1/status")
        self.assertEqual(code, 200)
        code, _, procs = s.get("/api/v1/processes")
        self.assertEqual(code, 200)
        print(f"\nserve peak VmRSS over 20 s: {rss / MiB:.1f} MiB; /api/v1/status {len(status)} bytes; "
              f"/api/v1/processes {len(procs)} bytes", file=sys.stderr)
        self.assertLess(rss, 64 * MiB * RSS_LIMIT_FACTOR + RSS_SANITIZER_QUARANTINE)
        self.assertLess(len(status.encode()), 1 * MiB)
        for what, body in (("status", status), ("processes", procs)):
            self.assertNotIn("sk-123", body, what)
            self.assertIn("--api-key=<redacted>", body, what)
            self.assertIn("[truncated ", body, what)
        rows = {r["pid"]: r for r in json.loads(procs)["processes"]}
        self.assertEqual(set(rows), set(self.pids))
        self.assertLess(len(rows[self.pids[0]]["cmdline"]), 4200)
        code, _, metrics = s.get("/metrics")
        self.assertEqual(parse_metrics(metrics)["gpudoctor_processes_left_out_total"], 0)

    def test_show_cmdline_full_shows_it(self):
        s = self.serve(["--show-cmdline", "full"])
        s.wait_log(r'msg="serving"')
        time.sleep(1.5)
        _, _, procs = s.get("/api/v1/processes")
        self.assertIn("--api-key=sk-123", procs)
        _, _, status = s.get("/api/v1/status")
        self.assertIn("--api-key=sk-123", status)

    def test_show_cmdline_none_and_bad_value(self):
        s = self.serve(["--show-cmdline", "none"])
        time.sleep(1.5)
        _, _, procs = s.get("/api/v1/processes")
        rows = json.loads(procs)["processes"]
        self.assertTrue(rows)
        self.assertTrue(all(r.get("cmdline", "") == "" for r in rows), procs[:500])
        p = subprocess.run([GPUDOCTOR, "serve", "--show-cmdline", "some"], capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--show-cmdline", p.stderr)


if __name__ == "__main__":
    unittest.main()
