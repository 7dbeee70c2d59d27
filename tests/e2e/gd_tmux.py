"""`gpudoctor top` in a real terminal: a tmux server of its own (a socket in
the test's temp dir) runs the command in a pane of a given size; the test
reads the screen as a user sees it (capture-pane), types keys (send-keys)
and resizes the window. tmux is a test prerequisite
(scripts/install-deps.sh --test)."""
import os
import re
import shlex
import shutil
import subprocess
import time


class Tmux:
    counter = 0

    def __init__(self, tmpdir, argv, env=None, width=120, height=40):
        if not shutil.which("tmux"):
            raise AssertionError("tmux not found: install it (scripts/install-deps.sh --test)")
        Tmux.counter += 1
        self.sock = os.path.join(tmpdir, f"tmux{Tmux.counter}.sock")
        script = os.path.join(tmpdir, f"pane{Tmux.counter}.sh")
        with open(script, "w") as f:
            f.write("#!/bin/sh\n")
            for k, v in (env or {}).items():
                f.write(f"export {k}={shlex.quote(v)}\n")
            f.write(" ".join(shlex.quote(a) for a in argv) + "\n")
            # After it exits: its status and the terminal's modes, for the
            # tests that check the terminal was restored.
            f.write('echo "EXIT=$?"\nstty -a | tr "\\n" " "\necho\nsleep 600\n')
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", str(width),
                  "-y", str(height), "sh " + shlex.quote(script))
        self.tmux("set-option", "-t", "t", "status", "off")

    def tmux(self, *args, check=True):
        return subprocess.run(["tmux", "-u", "-S", self.sock] + list(args), check=check,
                              capture_output=True, text=True, errors="replace")

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "t").stdout

    def lines(self):
        return self.screen().split("\n")

    def wait_for(self, what, timeout=15):
        """Waits until `what` (a regex, or a function of the screen text)
        matches; returns the screen, or fails showing it."""
        end = time.monotonic() + timeout
        text = ""
        while time.monotonic() < end:
            text = self.screen()
            if (what(text) if callable(what) else re.search(what, text)):
                return text
            time.sleep(0.1)
        raise AssertionError(f"the screen never showed {what!r}:\n{text}")

    def keys(self, *keys):
        self.tmux("send-keys", "-t", "t", *keys)

    def type(self, text):
        self.tmux("send-keys", "-t", "t", "-l", text)

    def resize(self, width, height):
        self.tmux("resize-window", "-t", "t", "-x", str(width), "-y", str(height))

    def title(self):
        return self.tmux("display-message", "-p", "-t", "t", "#{pane_title}").stdout.strip()

    def program_pid(self):
        """The pid of the command the pane's shell runs (its child)."""
        shell = int(self.tmux("display-message", "-p", "-t", "t", "#{pane_pid}").stdout)
        end = time.monotonic() + 10
        while time.monotonic() < end:
            try:
                with open(f"/proc/{shell}/task/{shell}/children") as f:
                    kids = f.read().split()
                if kids:
                    return int(kids[0])
            except FileNotFoundError:
                pass
            time.sleep(0.05)
        raise AssertionError("the pane's command did not start")

    def close(self):
        self.tmux("kill-server", check=False)
