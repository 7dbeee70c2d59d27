"""The lean `gpudoctor` and gpudoctor-full beside it (src/cli/full_binary.h):
the commands a resident `top` never needs run in gpudoctor-full, reached
through the one command line a user types, in the same process."""
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.request

from gd_e2e import E2E, FAKE_NVML, GPUDOCTOR, scenario_4gpu

FULL = os.path.join(os.path.dirname(os.path.abspath(GPUDOCTOR)), "gpudoctor-full")
# What gpudoctor-full links and the lean binary must not: the HTTP server
# and client, their TLS stacks, the history database, the web config parser.
NETWORK_LIBS = ("libmicrohttpd", "libgnutls", "libcpp-httplib", "libssl", "libcrypto",
                "libsqlite3", "libyaml-cpp")


def needed(binary):
    out = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True,
                         check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LeanBinary(E2E):
    def test_links_no_network_or_database_library(self):
        self.assertTrue(os.path.exists(FULL), f"{FULL} not built")
        lean = needed(GPUDOCTOR)
        self.assertTrue(any(n.startswith("libncursesw") for n in lean), lean)
        for lib in NETWORK_LIBS:
            self.assertFalse([n for n in lean if n.startswith(lib)],
                             f"gpudoctor links {lib}: {lean}")
        full = needed(FULL)
        # cpp-httplib is compiled in header-only (Debian's source): its TLS stack
        # stands for it.
        for lib in ("libmicrohttpd", "libsqlite3", "libssl"):
            self.assertTrue([n for n in full if n.startswith(lib)], f"{lib} not in {full}")

    def test_help_of_a_full_command_is_its_own(self):
        p = subprocess.run([GPUDOCTOR, "serve", "--help"], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("--listen", p.stdout)
        self.assertIn("--allow-remote-kill", p.stdout)
        p = subprocess.run([GPUDOCTOR, "--help"], capture_output=True, text=True, timeout=30)
        for name in ("serve", "export", "db", "top", "status"):
            self.assertRegex(p.stdout, rf"\n  {name}\s", name)

    def test_usage_errors_of_a_full_command_keep_exit_2(self):
        p = subprocess.run([GPUDOCTOR, "serve", "--no-such-flag"], capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("--no-such-flag", p.stderr)

    def test_serve_runs_in_the_same_process_with_global_flags_kept(self):
        port = free_port()
        scenario = scenario_4gpu()
        env = dict(os.environ, FAKE_NVML_SCENARIO=scenario)
        # Global flags before and after the command: both reach gpudoctor-full.
        proc = subprocess.Popen([GPUDOCTOR, "--nvml-lib", FAKE_NVML, "serve", "--no-db",
                                 "--listen", f"127.0.0.1:{port}", "--kmsg", "none"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.children.append(proc)
        body = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and body is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                    text = r.read().decode()
                if "DCGM_FI_DEV_GPU_UTIL" in text:
                    body = text
            except OSError:
                time.sleep(0.2)
        self.assertIsNotNone(body, "serve never answered with the fake's GPUs")
        # The pid a supervisor (systemd, a test) started is serve itself.
        self.assertEqual(os.path.realpath(f"/proc/{proc.pid}/exe"), os.path.realpath(FULL))
        self.assertEqual(body.count('DCGM_FI_DEV_GPU_UTIL{'), 4, body[:2000])

    def test_ps_asking_serve_runs_in_gpudoctor_full(self):
        # ps asks serve for history over HTTP, which only gpudoctor-full
        # links: the process that answers is gpudoctor-full, with the same
        # command line (a "serve" here that records who asked and waits).
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        self.addCleanup(listener.close)
        port = listener.getsockname()[1]
        env = dict(os.environ, FAKE_NVML_SCENARIO=scenario_4gpu())
        proc = subprocess.Popen([GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none", "ps",
                                 "--serve", f"http://127.0.0.1:{port}"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.children.append(proc)
        listener.settimeout(20)
        conn, _ = listener.accept()
        with conn:
            exe = os.path.realpath(f"/proc/{proc.pid}/exe")
            conn.recv(4096)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(exe, os.path.realpath(FULL))
        self.assertEqual(proc.returncode, 0, err)
        self.assertIn("PID", out)

    def test_a_lean_binary_alone_says_what_is_missing(self):
        with tempfile.TemporaryDirectory() as d:
            lonely = os.path.join(d, "gpudoctor")
            shutil.copy(GPUDOCTOR, lonely)
            for args, what in ((["serve"], "serve"), (["db", "check"], "db"),
                               (["top", "--connect", "http://127.0.0.1:1"], "top --connect")):
                p = subprocess.run([lonely] + args, capture_output=True, text=True, timeout=30)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn(f"{what} runs in {d}/gpudoctor-full", p.stderr)
                self.assertIn("No such file or directory", p.stderr)
            # ps and a live diagnose ask serve from gpudoctor-full; alone, they
            # say so in one line and go on without serve's history.
            for args, what in ((["ps", "--json", "--serve", "http://127.0.0.1:1"],
                                "ps --serve"),
                               (["--interval", "250ms", "diagnose", "--duration", "1s",
                                 "--json", "--serve", "http://127.0.0.1:1"],
                                "diagnose --serve")):
                p = subprocess.run([lonely, "--nvml-lib", "/nonexistent/libnvidia-ml.so.1",
                                    "--kmsg", "none"] + args,
                                   capture_output=True, text=True, timeout=30)
                self.assertIn(p.returncode, (0, 1, 2, 3), p.stderr)
                self.assertEqual(p.stderr.strip().splitlines(),
                                 [f"gpudoctor: warning: {what} runs in {d}/gpudoctor-full, "
                                  "which cannot be started: No such file or directory; "
                                  "going on without it"], p.stderr)
                self.assertTrue(p.stdout.startswith("{"), p.stdout[:200])
            # Without serve, nothing is handed over: no warning.
            p = subprocess.run([lonely, "--nvml-lib", "/nonexistent/libnvidia-ml.so.1",
                                "--kmsg", "none", "ps", "--json", "--serve", "none"],
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stderr, "")
            # What the lean binary runs itself still works alone.
            p = subprocess.run([lonely, "--nvml-lib", "/nonexistent/libnvidia-ml.so.1",
                                "--kmsg", "none", "status", "--json"],
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 3, p.stderr)  # no driver
            self.assertIn('"nvml_status"', p.stdout)


if __name__ == "__main__":
    unittest.main()
