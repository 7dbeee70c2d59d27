"""serve's remote kill (POST /api/v1/kill, --allow-remote-kill), end to end
at the HTTP level, with curl as a user would call it: serve refuses to
start with it and without basic auth, it is off (403, saying how to turn
it on) without the flag, a request without the custom header, with a
form's content type, without the password, chunked, too large or from a
rebinding page is refused, and a real child listed on a fake GPU is
planned, then ended with the plan's id (its steps streamed as they happen
when asked), each request logged with the user and address. TOP's `k` over --connect is in test_top.py
(TopRemoteKill)."""
import json
import os
import re
import subprocess
import time

from gd_e2e import FAKE_NVML, GPUDOCTOR, spawn_python
from test_serve import Serve, ServeCase
from test_who_kill import Scenario, alive, reap_in_background, wait_until

GiB = 1 << 30
# bcrypt of "s3cret pass" (cost 4, so the test is quick).
BCRYPT_HASH = "$2b$04$abcdefghijklmnopqrstuuoBpIrM0OnplXjsOI8DWYJTHUhJDuUv."
USER = "ops:s3cret pass"
SLEEPER = "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(120)\n"


def web_config(directory, text=None):
    path = os.path.join(directory, "web.yml")
    with open(path, "w") as f:
        f.write(text if text is not None else f"basic_auth_users:\n  ops: '{BCRYPT_HASH}'\n")
    return path


class RemoteKillApi(ServeCase):
    def sleeper(self):
        p = spawn_python(SLEEPER)
        self.children.append(p)
        return int(p.stdout.readline())

    def curl(self, serve, *args, body=None, auth=USER, path="/api/v1/kill"):
        """(status, headers text, body text) of one curl call."""
        cmd = ["curl", "-sS", "-D", "-", "--max-time", "60"]
        if auth:
            cmd += ["-u", auth]
        if body is not None:
            cmd += ["--data-binary", body]
        cmd += list(args) + [f"http://127.0.0.1:{serve.port}{path}"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
        self.assertEqual(p.returncode, 0, p.stderr)
        # (text mode: curl's \r\n arrive as \n)
        head, _, rest = p.stdout.partition("\n\n")
        while head.startswith("HTTP/1.1 100"):
            head, _, rest = rest.partition("\n\n")
        return int(head.split()[1]), head, rest

    def kill_json(self, serve, body, auth=USER):
        status, _, text = self.curl(serve, "-H", "Content-Type: application/json",
                                    "-H", "X-Gpudoctor-Kill: 1", body=json.dumps(body),
                                    auth=auth)
        return status, json.loads(text)

    def test_refuses_to_start_with_the_flag_and_without_auth(self):
        path = Scenario(self.tmp.name).write({})
        env = dict(os.environ, FAKE_NVML_SCENARIO=path)
        cases = [([], "give --web-config FILE with basic_auth_users"),
                 (["--web-config", web_config(self.tmp.name, "basic_auth_users: {}\n")],
                  "has no basic_auth_users")]
        for extra, expected in cases:
            p = subprocess.run([GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none", "serve",
                                "--no-db", "--listen", "127.0.0.1:0", "--allow-remote-kill"] +
                               extra, env=env, capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, p.stderr)
            lines = p.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, p.stderr)
            self.assertTrue(lines[0].startswith("gpudoctor: serve: --allow-remote-kill needs "
                                                "every request authenticated"), lines[0])
            self.assertIn(expected, lines[0])
        # --remote-kill-admins: only with the flag, and only users of the
        # web config (a typo would leave nobody an admin).
        cfg = web_config(self.tmp.name)
        for extra, expected in (
                (["--web-config", cfg, "--remote-kill-admins", "ops"],
                 "gpudoctor: serve: --remote-kill-admins needs --allow-remote-kill"),
                (["--web-config", cfg, "--allow-remote-kill", "--remote-kill-admins", "ops,opps"],
                 "gpudoctor: serve: --remote-kill-admins: 'opps' is not a user of "
                 "basic_auth_users in " + cfg)):
            p = subprocess.run([GPUDOCTOR, "--nvml-lib", FAKE_NVML, "--kmsg", "none", "serve",
                                "--no-db", "--listen", "127.0.0.1:0"] + extra,
                               env=env, capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(p.stderr.strip().splitlines(), [expected])

    def test_off_by_default_says_how_to_turn_it_on(self):
        pid = self.sleeper()
        path = Scenario(self.tmp.name).write({0: [(pid, GiB)]})
        s = self.serve(path, ["--no-db", "--web-config", web_config(self.tmp.name)])
        status, reply = self.kill_json(s, {"pids": [pid]})
        self.assertEqual(status, 403)
        self.assertIn("remote kill is off on this serve: start it with --allow-remote-kill",
                      reply["error"])
        _, _, text = self.curl(s, path="/api/v1/status")
        self.assertFalse(json.loads(text)["collect"]["remote_kill"])
        time.sleep(0.3)
        self.assertTrue(alive(pid))
        s.wait_log(r'msg="remote kill" client=127.0.0.1 .*status=403 error="remote kill is off')

    def test_web_pages_cannot_send_it_and_bodies_are_bounded(self):
        pid = self.sleeper()
        path = Scenario(self.tmp.name).write({0: [(pid, GiB)]})
        s = self.serve(path, ["--no-db", "--web-config", web_config(self.tmp.name),
                              "--allow-remote-kill"])
        body = json.dumps({"pids": [pid]})
        _, _, text = self.curl(s, path="/api/v1/status")
        self.assertTrue(json.loads(text)["collect"]["remote_kill"])
        # No custom header: what an HTML form or a cross-site fetch sends.
        status, _, text = self.curl(s, "-H", "Content-Type: application/json", body=body)
        self.assertEqual(status, 403)
        self.assertIn("X-Gpudoctor-Kill: 1", json.loads(text)["error"])
        # A form's content type, even with the header.
        status, _, _ = self.curl(s, "-H", "X-Gpudoctor-Kill: 1", body=body)  # urlencoded
        self.assertEqual(status, 415)
        status, _, _ = self.curl(s, "-H", "X-Gpudoctor-Kill: 1", "-H",
                                 "Content-Type: text/plain", body=body)
        self.assertEqual(status, 415)
        # No password, a wrong one.
        for auth in (None, "ops:wrong"):
            status, _, text = self.curl(s, "-H", "Content-Type: application/json", "-H",
                                        "X-Gpudoctor-Kill: 1", body=body, auth=auth)
            self.assertEqual(status, 401, auth)
        # GET, OPTIONS (a CORS preflight): POST only.
        status, head, _ = self.curl(s)
        self.assertEqual(status, 405)
        self.assertIn("Allow: POST", head)
        status, _, _ = self.curl(s, "-X", "OPTIONS", "-H", "Origin: https://evil.example",
                                 "-H", "Access-Control-Request-Method: POST")
        self.assertEqual(status, 405)
        # A DNS-rebinding page's Host.
        status, _, text = self.curl(s, "-H", "Host: evil.example", "-H",
                                    "Content-Type: application/json", "-H",
                                    "X-Gpudoctor-Kill: 1", body=body)
        self.assertEqual(status, 403)
        self.assertIn("Host header not allowed", text)
        # Bodies: 4 KiB at most, with a length, JSON that says what to do.
        big = json.dumps({"pids": [pid], "user": "x" * 5000})
        status, _, text = self.curl(s, "-H", "Content-Type: application/json", "-H",
                                    "X-Gpudoctor-Kill: 1", body=big)
        self.assertEqual(status, 413)
        self.assertIn("larger than 4096 bytes", text)
        status, _, _ = self.curl(s, "-H", "Content-Type: application/json", "-H",
                                 "X-Gpudoctor-Kill: 1", "-H", "Transfer-Encoding: chunked",
                                 body=body)
        self.assertEqual(status, 411)
        status, _, text = self.curl(s, "-H", "Content-Type: application/json", "-H",
                                    "X-Gpudoctor-Kill: 1", body='{"pids": [' + str(pid))
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(text)["error"], "kill request: the body is not JSON")
        status, reply = self.kill_json(s, {"pids": [pid], "signal": "HUP"})
        self.assertEqual(status, 400)
        self.assertIn("'signal' must be", reply["error"])
        # Other paths keep refusing bodies and methods.
        status, _, _ = self.curl(s, body="x", path="/metrics")
        self.assertEqual(status, 413)
        time.sleep(0.3)
        self.assertTrue(alive(pid), "a refused request ended the process")
        # Every one of those was logged, with the client's address.
        s.wait_log(r'msg="remote kill" client=127.0.0.1 unverified_user=ops status=401')
        s.wait_log(r'msg="remote kill" client=127.0.0.1 .*status=413')

    def test_plan_then_kill_with_its_id_ends_a_real_child(self):
        pid = self.sleeper()
        reap_in_background(self.children[-1])
        other = self.sleeper()
        # NVML lists both; `pid` until 6 s after serve started (its memory is
        # freed once it has ended).
        path = Scenario(self.tmp.name).write({0: [(pid, 20 * GiB), (other, GiB)]},
                                             later=[(6.0, {0: [(other, GiB)]})])
        s = self.serve(path, ["--no-db", "--web-config", web_config(self.tmp.name),
                              "--allow-remote-kill"])
        status, plan = self.kill_json(s, {"pids": [pid], "dry_run": True})
        self.assertEqual(status, 200, plan)
        self.assertEqual(plan["exit_code"], 0)
        self.assertEqual(plan["message"], "Dry run: nothing was sent.")
        self.assertEqual([t["pid"] for t in plan["plan"]["targets"]], [pid])
        self.assertEqual(plan["plan"]["targets"][0]["gpu_memory_bytes"], 20 * GiB)
        self.assertTrue(alive(pid))
        # PID 1 and a process no GPU lists: refused, nothing sent.
        status, refused = self.kill_json(s, {"pids": [1, os.getpid()]})
        self.assertEqual(status, 200)
        self.assertEqual(refused["exit_code"], 3)
        reasons = {r["pid"]: r["reason"] for r in refused["plan"]["refusals"]}
        self.assertEqual(reasons[1], "PID 1 (init) is never signalled")
        self.assertIn("an ancestor of gpudoctor", reasons[os.getpid()])
        # A stale plan id sends nothing.
        status, stale = self.kill_json(s, {"pids": [pid], "plan_id": "0123456789abcdef"})
        self.assertEqual(status, 409)
        self.assertIn("the plan changed since it was shown", stale["error"])
        self.assertTrue(alive(pid))
        status, done = self.kill_json(s, {"pids": [pid], "timeout": "15s", "force": True,
                                          "plan_id": plan["plan"]["id"]})
        self.assertEqual(status, 200, done)
        self.assertEqual(done["steps"], [{"pid": pid, "signal": "SIGTERM", "error": ""}])
        self.assertEqual(done["outcome"]["result"], "released")
        self.assertEqual(done["exit_code"], 0)
        self.assertEqual(done["message"], "GPU memory released.")
        mem = done["outcome"]["memory"][0]
        self.assertEqual(mem["gpu"], 0)
        self.assertLess(mem["after_bytes"], mem["before_bytes"])
        self.assertTrue(wait_until(lambda: not alive(pid)))
        self.assertTrue(alive(other), "a bystander was signalled")
        s.wait_log(rf'msg="remote kill" client=127.0.0.1 user=ops status=200 dry_run=false '
                   rf'pids={pid} .* signals_sent=1 exit_code=0 result="GPU memory released."')

    def test_a_session_longer_than_the_idle_timeout_gets_its_answer(self):
        # Ignores SIGTERM: without force the session waits its whole
        # timeout, past serve's 10 s idle timeout for connections.
        p = spawn_python("import os, signal, time\nsignal.signal(signal.SIGTERM, "
                         "signal.SIG_IGN)\nprint(os.getpid(), flush=True)\ntime.sleep(120)\n")
        self.children.append(p)
        pid = int(p.stdout.readline())
        path = Scenario(self.tmp.name).write({0: [(pid, GiB)]})
        s = self.serve(path, ["--no-db", "--web-config", web_config(self.tmp.name),
                              "--allow-remote-kill"])
        start = time.monotonic()
        status, reply = self.kill_json(s, {"pids": [pid], "timeout": 12})
        self.assertEqual(status, 200, reply)
        self.assertGreaterEqual(time.monotonic() - start, 12)
        self.assertEqual(reply["exit_code"], 5)
        self.assertEqual(reply["outcome"]["result"], "still_alive")
        self.assertIn("add --force", reply["outcome"]["still_alive"][0]["why"])
        self.assertTrue(alive(pid))

    def test_a_streamed_reply_shows_each_step_as_it_happens(self):
        # Ignores SIGTERM: TERM goes at once, KILL after the 3 s wait; with
        # "stream": true the client reads each as serve takes it.
        p = spawn_python("import os, signal, time\nsignal.signal(signal.SIGTERM, "
                         "signal.SIG_IGN)\nprint(os.getpid(), flush=True)\ntime.sleep(120)\n")
        self.children.append(p)
        pid = int(p.stdout.readline())
        reap_in_background(p)
        # The driver frees its memory once it has ended (KILL at ~4 s).
        path = Scenario(self.tmp.name).write({0: [(pid, GiB)]}, later=[(6.0, {0: []})])
        s = self.serve(path, ["--no-db", "--web-config", web_config(self.tmp.name),
                              "--allow-remote-kill"])
        body = json.dumps({"pids": [pid], "timeout": 3, "force": True, "stream": True})
        curl = subprocess.Popen(
            ["curl", "-sS", "-N", "--max-time", "60", "-u", USER,
             "-H", "Content-Type: application/json", "-H", "X-Gpudoctor-Kill: 1",
             "--data-binary", body, f"http://127.0.0.1:{s.port}/api/v1/kill"],
            stdout=subprocess.PIPE, text=True)
        start = time.monotonic()
        lines = []
        for line in curl.stdout:
            lines.append((time.monotonic() - start, json.loads(line)))
        curl.stdout.close()
        self.assertEqual(curl.wait(timeout=30), 0)
        kinds = [next(iter(obj)) for _, obj in lines]
        self.assertEqual(kinds, ["step", "step", "step", "reply"], lines)
        (t_term, term), (_, wait), (t_kill, kill), (_, last) = lines
        self.assertEqual(term["step"], {"pid": pid, "signal": "SIGTERM", "error": ""})
        self.assertEqual(wait["step"]["escalation"], True)
        self.assertEqual(kill["step"]["signal"], "SIGKILL")
        self.assertGreater(t_kill - t_term, 2.5, "TERM came with the outcome, not before it")
        self.assertEqual(last["reply"]["exit_code"], 0, last)
        self.assertEqual(len(last["reply"]["steps"]), 3)
        self.assertTrue(wait_until(lambda: not alive(pid)))
        s.wait_log(rf'msg="remote kill" client=127.0.0.1 user=ops status=200 dry_run=false '
                   rf'pids={pid} .* signals_sent=2 exit_code=0 .* streamed=true')

    def test_plain_http_off_loopback_is_warned_about(self):
        path = Scenario(self.tmp.name).write({})
        s = Serve(path, ["--no-db", "--web-config", web_config(self.tmp.name),
                         "--allow-remote-kill", "--allowed-host", "localhost"], self.tmp.name,
                  listen="0.0.0.0:0")
        self.servers.append(s)
        s.wait_log(r'level=warning msg="remote kill over plain HTTP on a non-loopback address')
        loopback = self.serve(path, ["--no-db", "--web-config", web_config(self.tmp.name),
                                     "--allow-remote-kill"])
        loopback.wait_log(r'msg="remote kill is on')
        self.assertFalse(any("plain HTTP on a non-loopback" in l for l in loopback.log()))


if __name__ == "__main__":
    import unittest
    unittest.main()
