"""A headless Chromium (Debian's `chromium`) driven over the DevTools
protocol with python3-websocket: enough of the protocol for the dashboard
tests and the web benchmark (navigate, evaluate, click, screenshot, watch
console errors, dialogs and network requests)."""
import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request

try:
    import websocket  # Debian: python3-websocket
except ImportError as e:  # a prerequisite: fail, never skip
    raise ImportError("python3-websocket is missing (scripts/install-deps.sh --test installs it); "
                      "run this test with Debian's /usr/bin/python3") from e

CHROMIUM = os.environ.get("GD_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


class Browser:
    """One headless Chromium with a throwaway profile."""

    def __init__(self, width=1366, height=900, extra_args=()):
        if not os.path.exists(CHROMIUM):
            raise RuntimeError(f"{CHROMIUM} not found: scripts/install-deps.sh --test installs Debian's chromium")
        # Chromium helpers may still write to the profile as it exits.
        self.profile = tempfile.TemporaryDirectory(prefix="gd-chromium-", ignore_cleanup_errors=True)
        args = [CHROMIUM, "--headless=new", "--disable-gpu", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-sync",
                "--disable-component-update", "--remote-debugging-port=0",
                "--remote-allow-origins=*", f"--user-data-dir={self.profile.name}",
                f"--window-size={width},{height}"] + list(extra_args) + ["about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # Chromium refuses to run as root otherwise
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, text=True, errors="replace")
        self.port = None
        end = time.time() + 30
        lines = []
        while time.time() < end:
            line = self.proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if m:
                self.port = int(m.group(1))
                break
        if self.port is None:
            self.close()
            raise RuntimeError("chromium did not start:\n" + "".join(lines[-20:]))
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for _ in self.proc.stderr:
            pass

    def new_page(self):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/json/new?about:blank", method="PUT")
        with urllib.request.urlopen(req, timeout=10) as r:
            target = json.loads(r.read())
        return Page(target["webSocketDebuggerUrl"])

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.profile.cleanup()


class Page:
    """One tab: commands and the events it reports."""

    def __init__(self, ws_url):
        self.ws = websocket.create_connection(ws_url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.replies = {}
        self.events = []
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(domain + ".enable")

    def _read(self):
        while True:
            try:
                msg = json.loads(self.ws.recv())
            except Exception:
                return
            with self.cond:
                if "id" in msg:
                    self.replies[msg["id"]] = msg
                else:
                    self.events.append(msg)
                    # A dialog would block the page: note it and close it.
                    if msg.get("method") == "Page.javascriptDialogOpening":
                        threading.Thread(target=self.send, args=("Page.handleJavaScriptDialog",
                                                                 {"accept": False}), daemon=True).start()
                self.cond.notify_all()

    def send(self, method, params=None, timeout=30):
        with self.cond:
            self.next_id += 1
            mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params or {}}))
        end = time.time() + timeout
        with self.cond:
            while mid not in self.replies:
                left = end - time.time()
                if left <= 0:
                    raise TimeoutError(f"{method}: no reply in {timeout} s")
                self.cond.wait(left)
            reply = self.replies.pop(mid)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def evaluate(self, expr, timeout=30):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": True}, timeout)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expr!r} threw: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait_for(self, expr, timeout=10, interval=0.05):
        """Polls `expr` until truthy; returns its value."""
        end = time.time() + timeout
        last = None
        while time.time() < end:
            try:
                last = self.evaluate(expr)
            except RuntimeError as e:  # not there yet (e.g. null.dataset)
                last = str(e)[:200]
                time.sleep(interval)
                continue
            if last:
                return last
            time.sleep(interval)
        raise AssertionError(f"timed out after {timeout} s waiting for {expr} (last {last!r})")

    def navigate(self, url):
        self.send("Page.navigate", {"url": url})

    def screenshot(self, path, full_page=True):
        r = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": full_page})
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))

    def errors(self):
        """Console errors, uncaught exceptions and browser log errors (CSP
        violations, failed loads) seen so far, as text."""
        out = []
        with self.cond:
            events = list(self.events)
        for e in events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append("exception: " + str(d.get("exception", {}).get("description") or d.get("text")))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: " + p["entry"].get("text", "") + " " + p["entry"].get("url", ""))
        return out

    def dialogs(self):
        with self.cond:
            return [e for e in self.events if e.get("method") == "Page.javascriptDialogOpening"]

    def requests(self, pattern=""):
        with self.cond:
            return [e["params"]["request"]["url"] for e in self.events
                    if e.get("method") == "Network.requestWillBeSent"
                    and pattern in e["params"]["request"]["url"]]

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass
