"""gpudoctor serve against hostile clients that talk HTTP correctly enough
to reach its handlers, end to end (the real binary, real sockets): a
wrong-password flood must not lock out valid users nor take the slow
handlers' threads, smuggling-shaped requests (two Host or two
Content-Length headers) and passwords with a NUL byte are refused, a
non-admin may name its own uid in a remote kill, and bidi controls in a
command line reach the dashboard escaped, the way the terminal views show
them."""
import base64
import collections
import http.client
import json
import os
import pwd
import socket
import subprocess
import sys
import threading
import time

from gd_e2e import E2E, load_scenario, scenario_4gpu, write_scenario
from test_serve import ServeCase, first_sample_scenario

# bcrypt at cost 8 (~60 ms a check on the build VM): every wrong password
# below costs one check, as each new one would against a real users file.
USERS = {
    "prometheus": ("s3cret pass", "$2b$08$IUmfSZsna.s0v1luaU41ju2Z5x6uLCTUbaNglcd4BJrSjScpYBZLe"),
    "grafana": ("gr4fana pass", "$2b$08$J9J3QCDH2jzNyA9XpIQr8OdIIvzhLeeVA2/zttgtlA3HRfiRAZ1oG"),
    "ops": ("0ps pass", "$2b$08$XliVhv9CPh0.JF0eFb1V7urlhml9J0mF9vPyUCsV.b7Gz7HY/lQuO"),
}
FLOOD_CLIENTS = 24
# Generous: a login waits behind the flood's checks, under ASan on 2 cores.
TIMEOUT_S = 90
HISTORY = "/api/v1/history?metric=gpu.util_pct&since=10m"
HOLDER = "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(300)\n"


def gpu0_holder(test, argv=None):
    """A live process (argv[0] as given) that the fake NVML lists on GPU 0
    with 2 GiB: returns its pid and the scenario."""
    argv = argv or [sys.executable.encode()]
    holder = subprocess.Popen(argv + [b"-c", HOLDER.encode()], executable=sys.executable,
                              stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    test.children.append(holder)
    pid = int(holder.stdout.readline())
    header, samples = load_scenario(scenario_4gpu())
    sample = samples[0]
    for g in sample["gpus"]:
        if g["index"] == 0:
            g["processes"] = [{"pid": pid, "used_bytes": 2 * 1024 ** 3, "type": "compute"}]
    return pid, write_scenario(header, [sample], test.tmp.name)


def basic(user, password):
    raw = user.encode() + b":" + (password if isinstance(password, bytes) else password.encode())
    return "Basic " + base64.b64encode(raw).decode()


def get(host, port, path, auth=None, timeout=TIMEOUT_S):
    """(status, body) on a fresh connection; status 0 when it failed."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Authorization": auth} if auth else {})
        r = conn.getresponse()
        return r.status, r.read()
    except (OSError, http.client.HTTPException):
        return 0, b""
    finally:
        conn.close()


def raw_request(port, text, timeout=30):
    """Sends `text` as is and returns (status, whole reply)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(text)
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            data += chunk
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.") else 0
    return status, data


def metric(body, name):
    for line in body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


class WebConfigCase(ServeCase):
    def start(self, extra=()):
        cfg = os.path.join(self.tmp.name, "web.yml")
        with open(cfg, "w") as f:
            f.write("basic_auth_users:\n" + "".join(f"  {u}: '{h}'\n" for u, (_, h) in USERS.items()))
        path, _, _ = first_sample_scenario(self.tmp.name)
        s = self.serve(path, ["--web-config", cfg] + list(extra))
        return s


class Flood:
    """Clients that each send GET /metrics with a new wrong password as
    fast as they are answered (for a user that exists, and for one that
    does not), counting the statuses."""

    def __init__(self, host, port, clients):
        self.host, self.port = host, port
        self.statuses = collections.Counter()
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(clients)]
        for t in self.threads:
            t.start()

    def _run(self, i):
        n = 0
        user = "prometheus" if i % 6 else "mallory"
        while not self.stopping.is_set():
            n += 1
            status, _ = get(self.host, self.port, "/metrics", basic(user, f"wrong-{i}-{n}"))
            with self.lock:
                self.statuses[status] += 1

    def answered(self):
        with self.lock:
            return sum(self.statuses.values())

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(TIMEOUT_S)


class AuthFlood(WebConfigCase):
    def test_valid_users_and_slow_handlers_work_under_a_wrong_password_flood(self):
        s = self.start()
        flood = Flood(s.host, s.port, FLOOD_CLIENTS)
        try:
            deadline = time.time() + TIMEOUT_S
            while flood.answered() < 2 * FLOOD_CLIENTS and time.time() < deadline:
                time.sleep(0.05)
            self.assertGreaterEqual(flood.answered(), 2 * FLOOD_CLIENTS, "the flood never got going")
            # Logins not seen before (Prometheus and Grafana after a serve
            # restart, an operator), all at once while the flood goes on.
            asks = [("prometheus", "/metrics"), ("grafana", HISTORY), ("ops", "/api/v1/status")]
            results = {}

            def ask(user, path):
                results[user] = get(s.host, s.port, path, basic(user, USERS[user][0]))[0]

            threads = [threading.Thread(target=ask, args=a) for a in asks]
            for t in threads:
                t.start()
            for t in threads:
                t.join(TIMEOUT_S + 5)
            self.assertEqual(results, {"prometheus": 200, "grafana": 200, "ops": 200})
            # Remembered now: scrapes and the slow history handler answer.
            for _ in range(5):
                self.assertEqual(get(s.host, s.port, "/metrics", basic("prometheus", USERS["prometheus"][0]))[0],
                                 200)
                self.assertEqual(get(s.host, s.port, HISTORY, basic("grafana", USERS["grafana"][0]))[0], 200)
            status, body = get(s.host, s.port, "/metrics", basic("prometheus", USERS["prometheus"][0]))
        finally:
            flood.stop()
        self.assertEqual(status, 200)
        # The flood is visible to the operator, and never got in.
        self.assertGreater(metric(body, "gpudoctor_http_auth_failures_total"), 0)
        self.assertIsNotNone(metric(body, "gpudoctor_http_auth_checks_refused_total"))
        self.assertNotIn(200, flood.statuses)
        self.assertGreater(flood.statuses[401], 0)
        self.assertLessEqual(set(flood.statuses), {401, 503})

    def test_a_repeated_wrong_password_is_answered_from_memory(self):
        s = self.start(["--no-db"])
        wrong = basic("prometheus", "old password")
        for _ in range(3):
            self.assertEqual(get(s.host, s.port, "/metrics", wrong)[0], 401)
        _, body = get(s.host, s.port, "/metrics", basic("prometheus", USERS["prometheus"][0]))
        self.assertEqual(metric(body, "gpudoctor_http_auth_failures_total"), 3)

    def test_a_password_with_a_nul_byte_is_refused(self):
        s = self.start(["--no-db"])
        good = USERS["prometheus"][0].encode()
        for password in (good + b"\0junk", good + b"\0"):
            self.assertEqual(get(s.host, s.port, "/metrics", basic("prometheus", password))[0], 401, password)
        self.assertEqual(get(s.host, s.port, "/metrics", basic("prometheus", good))[0], 200)


class Smuggling(ServeCase):
    def test_two_hosts_or_two_content_lengths_are_refused(self):
        path, _, _ = first_sample_scenario(self.tmp.name)
        s = self.serve(path, ["--no-db"])
        cases = [
            (b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n", "Host"),
            (b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nhost: 127.0.0.1\r\n\r\n", "Host"),
            (b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n"
             b"Content-Length: 27\r\n\r\nGET /api/v1/status HTTP/1.1", "Content-Length"),
            (b"POST /api/v1/kill HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
             b"X-Gpudoctor-Kill: 1\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}", "Content-Length"),
        ]
        for request, name in cases:
            status, reply = raw_request(s.port, request)
            self.assertEqual(status, 400, reply)
            body = reply.split(b"\r\n\r\n", 1)[1]
            self.assertEqual(json.loads(body), {"error": f"more than one {name} header in the request"})
            # The connection was closed: nothing smuggled was answered.
            self.assertEqual(reply.count(b"HTTP/1.1 "), 1, reply)
        # One of each is still fine.
        status, _ = raw_request(s.port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                        b"Content-Length: 0\r\nConnection: close\r\n\r\n")
        self.assertEqual(status, 200)


class RemoteKillOwnUid(ServeCase):
    """--remote-kill-admins: a user not listed may end the processes of the
    Unix user of its name, named by that name or by its uid."""

    def test_a_non_admin_may_name_its_own_uid(self):
        pid, scenario = gpu0_holder(self)
        me = pwd.getpwuid(os.getuid()).pw_name
        _, hash_ = USERS["ops"]
        cfg = os.path.join(self.tmp.name, "web.yml")
        with open(cfg, "w") as f:
            f.write(f"basic_auth_users:\n  '{me}': '{hash_}'\n  ops: '{hash_}'\n")
        s = self.serve(scenario, ["--no-db", "--web-config", cfg, "--allow-remote-kill",
                                  "--remote-kill-admins", "ops"])

        def kill(user):
            conn = http.client.HTTPConnection(s.host, s.port, timeout=TIMEOUT_S)
            try:
                conn.request("POST", "/api/v1/kill",
                             body=json.dumps({"pids": [pid], "user": user, "dry_run": True}),
                             headers={"Authorization": basic(me, USERS["ops"][0]),
                                      "Content-Type": "application/json", "X-Gpudoctor-Kill": "1"})
                r = conn.getresponse()
                return r.status, json.loads(r.read())
            finally:
                conn.close()

        for user in (me, str(os.getuid())):
            status, reply = kill(user)
            self.assertEqual(status, 200, (user, reply))
            self.assertEqual([t["pid"] for t in reply["plan"]["targets"]], [pid], reply)
        status, reply = kill(str(os.getuid() + 1))
        self.assertEqual(status, 403, reply)
        self.assertIn(f"'{me}' may end only the processes of the Unix user '{me}'", reply["error"])


# A command line that would reorder its row: a right-to-left override,
# isolates, marks and a line separator.
BIDI_ARGV0 = "train\u202e.exe\u202c-\u2066x\u2069-\u200f-\u2028end"
BIDI_SHOWN = "train\\u202e.exe\\u202c-\\u2066x\\u2069-\\u200f-\\u2028end"
BIDI_CONTROLS = {0x061C, 0x200E, 0x200F, 0x2028, 0x2029} | set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))


class BidiDashboard(E2E):
    """Run with a Python that has python3-websocket (see CMakeLists.txt)."""

    def test_bidi_controls_in_a_command_line_are_shown_escaped(self):
        from cdp import Browser
        from test_serve import Serve
        pid, scenario = gpu0_holder(self, [BIDI_ARGV0.encode()])
        serve = Serve(scenario, ["--no-db", "--show-cmdline", "full"], self.tmp)
        browser = Browser()
        page = browser.new_page()
        try:
            page.navigate(f"http://{serve.host}:{serve.port}/")
            row = f"document.querySelector('tr[data-pid=\"{pid}\"]')"
            page.wait_for(row + " !== null", 20)
            cells = page.evaluate(f"Array.from({row}.cells).map(c => c.textContent)")
            title = page.evaluate(f"{row}.querySelector('td.cmd').title")
        finally:
            page.close()
            browser.close()
            serve.kill()
        cmd = [c for c in cells if "train" in c]
        self.assertEqual(len(cmd), 1, cells)
        self.assertIn(BIDI_SHOWN, cmd[0])
        for text in cells + [title]:
            self.assertFalse({ord(ch) for ch in text} & BIDI_CONTROLS, text)
        self.assertIn(BIDI_SHOWN, title)
