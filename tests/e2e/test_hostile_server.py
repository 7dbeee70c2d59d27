"""`gpudoctor top --connect` against a hostile or broken "serve", end to
end: the test runs the server itself (Python sockets on a thread) and the
real top in tmux, and checks what a user sees. A reply that drips one byte
every 1.5 s, endless reply headers and a status nested 100,000 objects deep
each end in one line on the screen; top's memory stays bounded, it does not
crash, `q` and SIGTERM end it while the server is still at it, and the
terminal is left as it was (out of the alternate screen), over http and
https. A port out of range is a usage error."""
import os
import signal
import socket
import ssl
import subprocess
import threading
import time

from gd_e2e import E2E, FAKE_NVML, GPUDOCTOR, RSS_LIMIT_FACTOR, self_signed_cert
from gd_tmux import Tmux

MiB = 1 << 20
# A normal build of top holds ~20 MiB; unbounded headers reached 3.8 GiB.
RSS_LIMIT = 200 * MiB * RSS_LIMIT_FACTOR
# "Promptly", stated as a generous bound: top's own request deadline is 2 s.
EXIT_TIMEOUT_S = 10

DEEP = 100_000


def deep_status():
    """A status reply whose header is 100,000 objects deep (~600 KB)."""
    return ('{"header": ' + '{"a": ' * DEEP + "1" + "}" * DEEP + ', "sample": null}').encode()


class HostileServer:
    """Answers every request on 127.0.0.1 as `mode` says: "drip" sends a
    reply's head, then its body one byte every 1.5 s; "headers" sends
    header lines as fast as the client takes them and never ends them;
    "deep" sends deep_status() with a correct head."""

    def __init__(self, mode, tls=None):
        self.mode = mode
        self.tls = tls  # (certificate, key): https
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.stopping = threading.Event()
        self.requests = 0
        self.header_bytes_sent = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self):
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def stop(self):
        self.stopping.set()
        self.sock.close()

    def _accept(self):
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            if self.tls:
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                ctx.load_cert_chain(*self.tls)
                conn = ctx.wrap_socket(conn, server_side=True)
            head = b""
            while b"\r\n\r\n" not in head:
                data = conn.recv(4096)
                if not data:
                    return
                head += data
            self.requests += 1
            getattr(self, "_" + self.mode)(conn)
        except OSError:
            pass  # the client gave up: what it should do
        finally:
            conn.close()

    def _drip(self, conn):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100000\r\n\r\n{")
        while not self.stopping.wait(1.5):
            conn.sendall(b" ")

    def _headers(self, conn):
        conn.sendall(b"HTTP/1.1 200 OK\r\n")
        # Short lines: the most headers (and client memory) per byte sent.
        chunk = b"A: b\r\n" * 10000
        while not self.stopping.is_set():
            conn.sendall(chunk)
            self.header_bytes_sent += len(chunk)

    def _deep(self, conn):
        body = deep_status()
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


class HostileCase(E2E):
    mode = None

    def setUp(self):
        super().setUp()
        self.server = HostileServer(self.mode)
        self.addCleanup(self.server.stop)
        self.panes = []

    def tearDown(self):
        for p in self.panes:
            p.close()
        super().tearDown()

    def top(self, server=None, *extra):
        server = server or self.server
        pane = Tmux(self.tmp.name, [GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none",
                                    "--interval", "500ms", "top", "--connect",
                                    server.url(), *extra],
                    env={"FAKE_NVML_SCENARIO": "/nonexistent", "LANG": "C.UTF-8"})
        self.panes.append(pane)
        return pane

    def alternate_screen(self, pane):
        return pane.tmux("display-message", "-p", "-t", "t", "#{alternate_on}").stdout.strip()

    def assert_ends_cleanly(self, pane, how="q"):
        """`how` ("q" or SIGTERM) ends top while the server is still at it:
        exit status 0, the terminal out of the alternate screen, echo and
        canonical input back."""
        if how == "q":
            pane.keys("q")
        else:
            os.kill(pane.program_pid(), how)
        s = pane.wait_for(r"EXIT=\d+\s+speed \d+ baud", timeout=EXIT_TIMEOUT_S)
        self.assertIn("EXIT=0", s, f"{how}: {s}")
        self.assertEqual(self.alternate_screen(pane), "0", f"{how}: left in the alternate screen")
        self.assertRegex(s, r"(?<!-)\becho\b")
        self.assertRegex(s, r"(?<!-)\bicanon\b")

    def watch_rss(self, pid, seconds):
        """The largest RSS of `pid` sampled over `seconds` (sampling stops
        once it is over RSS_LIMIT)."""
        peak = 0
        end = time.monotonic() + seconds
        while time.monotonic() < end and peak < RSS_LIMIT:
            peak = max(peak, rss_bytes(pid))
            time.sleep(0.1)
        return peak


class Drip(HostileCase):
    mode = "drip"

    def test_dripping_reply_is_an_error_and_q_ends_top(self):
        pane = self.top()
        pid = pane.program_pid()
        s = pane.wait_for(r"!! cannot reach http://127\.0\.0\.1:\d+: no complete reply within 2s",
                          timeout=15)
        self.assertNotIn("connecting to", s)
        # Still polling (a new request after each failure), still dripping.
        peak = self.watch_rss(pid, 3)
        self.assertLess(peak, RSS_LIMIT)
        print(f"drip: peak RSS {peak / MiB:.1f} MiB over {self.server.requests} requests")
        self.assertGreaterEqual(self.server.requests, 2, "top stopped polling")
        self.assert_ends_cleanly(pane, "q")

    def test_q_ends_top_during_a_dripping_https_reply(self):
        # Ending a TLS connection from our side must not kill top (OpenSSL
        # writes to the shut-down socket: SIGPIPE).
        crt, key = self_signed_cert(self.tmp.name)
        server = HostileServer("drip", tls=(crt, key))
        self.addCleanup(server.stop)
        pane = self.top(server, "--ca-file", crt)
        pane.wait_for(r"!! cannot reach https://127\.0\.0\.1:\d+: no complete reply within 2s",
                      timeout=15)
        pane.wait_for(lambda _: server.requests >= 2, timeout=15)
        self.assert_ends_cleanly(pane, "q")

    def test_sigterm_ends_top_during_a_dripping_reply(self):
        pane = self.top()
        pane.wait_for(lambda _: self.server.requests >= 1, timeout=15)
        self.assert_ends_cleanly(pane, signal.SIGTERM)


class EndlessHeaders(HostileCase):
    mode = "headers"

    def test_endless_headers_are_refused_with_bounded_memory(self):
        pane = self.top()
        pid = pane.program_pid()
        # Under attack for 8 s (a new flood on every poll): RSS stays far
        # below what unbounded headers take (~100 MiB/s).
        peak = self.watch_rss(pid, 8)
        self.assertLess(peak, RSS_LIMIT, f"RSS reached {peak / MiB:.0f} MiB")
        print(f"endless headers: peak RSS {peak / MiB:.1f} MiB over {self.server.requests} "
              "requests")
        self.assertGreaterEqual(self.server.requests, 2, "top stopped polling")
        pane.wait_for(r"!! http://127\.0\.0\.1:\d+: the reply's headers exceed 100 lines "
                      r"or 64 KiB")
        self.assert_ends_cleanly(pane, "q")


class DeepJson(HostileCase):
    mode = "deep"

    def test_deep_status_is_refused_without_a_crash(self):
        pane = self.top()
        pid = pane.program_pid()
        s = pane.wait_for(r"!! http://127\.0\.0\.1:\d+/api/v1/status: nested deeper than 64 "
                          r"levels", timeout=15)
        self.assertNotIn("EXIT=", s)
        peak = self.watch_rss(pid, 3)
        print(f"deep JSON: peak RSS {peak / MiB:.1f} MiB over {self.server.requests} requests")
        self.assertLess(peak, RSS_LIMIT)
        self.assertGreaterEqual(self.server.requests, 2, "top stopped polling")
        self.assert_ends_cleanly(pane, "q")


class Port(E2E):
    def test_port_out_of_range_is_a_usage_error(self):
        for url, port in (("http://127.0.0.1:181017078", "181017078"),
                          ("http://127.0.0.1:0", "0"),
                          ("https://[::1]:65536/gpu07", "65536"),
                          ("http://127.0.0.1:80x", "80x")):
            p = subprocess.run([GPUDOCTOR, "top", "--connect", url], capture_output=True,
                               text=True, timeout=30)
            self.assertEqual(p.returncode, 2, f"{url}: {p.stderr}")
            lines = p.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, p.stderr)
            self.assertIn("--connect", lines[0])
            self.assertIn(f"port '{port}' is not a number in 1..65535", lines[0])
            self.assertIn(url, lines[0])
