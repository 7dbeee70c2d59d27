"""What a new user meets in the first hour (issue 41's "defects that
mislead"): the same memory figures from the finding and who, what
--min-severity and --gpu hid, status's exit status when NVML cannot be
used, usage errors that exit 2, a growing process in watch-leak's exit
status, and kill's advice when every owner is gone."""
import json
import os
import re
import subprocess
import unittest

from gd_e2e import (E2E, NO_DRIVER, load_scenario, run, scenario_4gpu, unused_pid,
                    write_scenario)

GiB = 1 << 30
MiB = 1 << 20


def scenario_with(tmpdir, gpu_procs, used=None, header_change=None):
    """The fake's 4-GPU scenario, its GPUs holding `gpu_procs` ({gpu: [(pid,
    bytes or None)]}) and `used` ({gpu: bytes}; default: the processes'
    known bytes and 300 MiB of driver)."""
    header, samples = load_scenario(scenario_4gpu())
    if header_change:
        header_change(header)
    s = samples[0]
    for g in s["gpus"]:
        plist = gpu_procs.get(g["index"], [])
        g["processes"] = [{"pid": p, "used_bytes": b, "type": "compute"} for p, b in plist]
        g["mem_used_bytes"] = (used or {}).get(
            g["index"], sum(b or 0 for _, b in plist) + 300 * MiB)
    s["processes"] = []
    return write_scenario(header, [s], tmpdir)


class OrphanFigures(E2E):
    """NVML lists a pid that no longer exists, without a memory figure:
    the finding, who and (through the same model function) top and the
    dashboard say how much no live process holds."""

    def test_finding_and_who_give_the_same_figure(self):
        gone = unused_pid()
        path = scenario_with(self.tmp.name, {3: [(gone, None)]}, used={3: 16 * GiB})
        p = run(["--interval", "200ms", "diagnose", "--duration", "2s", "--serve", "none",
                 "--json"], scenario=path, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        found = [f for f in json.loads(p.stdout)["findings"] if f["id"] == "orphaned-memory"]
        self.assertEqual(len(found), 1, p.stdout)
        evidence = found[0]["evidence"]
        self.assertIn("16.0 GiB used, 16.0 GiB of it not held by any live process", evidence)
        self.assertIn(f"pid {gone} (state missing, size not given by NVML,", evidence)
        self.assertNotIn("0.0 GiB in", evidence)

        who = run(["who", "3", "--json"], scenario=path)
        self.assertEqual(who.returncode, 0, who.stderr)
        self.assertEqual(json.loads(who.stdout)["gpus"][0]["not_owned_bytes"], 16 * GiB)
        text = run(["who", "3"], scenario=path).stdout
        self.assertIn("16.0 GiB of it not held by any live process", text)


class DiagnoseFilters(E2E):
    def diagnose(self, *args):
        return run(["diagnose", "--from", scenario_4gpu()] + list(args), nvml=NO_DRIVER)

    def test_min_severity_says_what_it_hid(self):
        everything = json.loads(self.diagnose("--json").stdout)["findings"]
        warnings = sum(1 for f in everything if f["severity"] == "warning")
        infos = sum(1 for f in everything if f["severity"] == "info")
        self.assertFalse(any(f["severity"] == "critical" for f in everything), everything)
        self.assertGreater(warnings, 0)
        p = self.diagnose("--min-severity", "critical")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("No problem found", p.stdout)
        self.assertNotIn("All is well", p.stdout)
        self.assertIn(f"No critical findings; {warnings} warning", p.stdout)
        self.assertIn("hidden by --min-severity", p.stdout)
        doc = json.loads(self.diagnose("--min-severity", "critical", "--json").stdout)
        self.assertEqual(doc["findings"], [])
        self.assertEqual(doc["hidden"]["min_severity"],
                         {"critical": 0, "warning": warnings, "info": infos})

    def test_findings_about_other_gpus_are_counted_as_hidden(self):
        everything = json.loads(self.diagnose("--json").stdout)["findings"]
        about_others = [f for f in everything if f["gpus"] and 0 not in f["gpus"]]
        self.assertTrue(about_others, everything)
        doc = json.loads(self.diagnose("--gpu", "0", "--json").stdout)
        self.assertEqual(sum(doc["hidden"]["gpu"].values()), len(about_others), doc)
        self.assertIn("about other GPUs hidden by --gpu", self.diagnose("--gpu", "0").stdout)

    def test_a_gpu_not_in_the_window_is_a_usage_error(self):
        p = self.diagnose("--gpu", "9")
        self.assertEqual(p.returncode, 2, p.stdout)
        self.assertEqual(p.stdout, "")
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("--gpu", p.stderr)
        self.assertIn("GPU 9 is not in the window (its GPUs: 0,1,2,3)", p.stderr)


class StatusExitCodes(E2E):
    """status shows the host whatever NVML says, and exits non-zero with
    one code per cause (docs/commands.md)."""

    def fault(self, code):
        def change(header):
            header["faults"] = [{"init_return": code}]
        return scenario_with(self.tmp.name, {}, header_change=change)

    def test_one_code_per_cause(self):
        self.assertEqual(run(["status"], scenario=scenario_4gpu()).returncode, 0)
        for args, want in (({"nvml": NO_DRIVER}, 3),
                           ({"scenario": self.fault("DRIVER_NOT_LOADED")}, 3),
                           ({"scenario": self.fault("NO_PERMISSION")}, 4),
                           ({"scenario": self.fault("LIB_RM_VERSION_MISMATCH")}, 5),
                           ({"scenario": self.fault("UNKNOWN")}, 6)):
            for json_flag in ([], ["--json"]):
                p = run(["status"] + json_flag, **args)
                self.assertEqual(p.returncode, want, (args, json_flag, p.stdout, p.stderr))
                self.assertTrue(p.stdout.strip(), args)  # the host is still shown


class UsageErrors(E2E):
    """Every usage error exits 2, with one line naming the flag."""

    def assert_usage(self, args, flag):
        p = run(args, scenario=scenario_4gpu(), timeout=30)
        self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn(flag, p.stderr)

    def test_bad_listen_alertmanager_and_serve_urls(self):
        self.assert_usage(["serve", "--no-db", "--listen", "nonsense"], "--listen")
        self.assert_usage(["serve", "--no-db", "--listen", "127.0.0.1:0", "--alertmanager",
                           "notaurl"], "--alertmanager")
        self.assert_usage(["ps", "--serve", "notaurl"], "--serve")
        self.assert_usage(["diagnose", "--duration", "1s", "--serve", "notaurl"], "--serve")


class KillGoneOwners(E2E):
    def test_nothing_to_signal_gives_whos_reset_advice(self):
        gone = unused_pid()
        path = scenario_with(self.tmp.name, {2: [(gone, 6 * GiB)]})
        p = run(["kill", "--gpu", "2", "-n"], scenario=path)
        self.assertIn("Nothing to signal.", p.stdout)
        # The memory is not back: exit 4, as documented, with what to do.
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
        self.assertIn("`nvidia-smi --gpu-reset -i 2`", p.stdout)
        who = run(["who", "2"], scenario=path).stdout
        self.assertIn("`nvidia-smi --gpu-reset -i 2`", who)


class HelpAndSuggestions(E2E):
    """`help [COMMAND]` and a guess at a mistyped command or flag."""

    def test_help_and_help_of_a_command(self):
        p = run(["help"], scenario=scenario_4gpu())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("diagnose", p.stdout)
        self.assertIn("watch-leak", p.stdout)
        p = run(["help", "diagnose"], scenario=scenario_4gpu())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, run(["diagnose", "--help"], scenario=scenario_4gpu()).stdout)
        self.assertIn("--min-severity", p.stdout)
        p = run(["help", "diagnsoe"], scenario=scenario_4gpu())
        self.assertEqual(p.returncode, 2, p.stdout)
        self.assertIn("did you mean diagnose?", p.stderr)

    def test_a_mistyped_command_or_flag_gets_a_suggestion(self):
        p = run(["stauts"], scenario=scenario_4gpu())
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.strip(),
                         "gpudoctor: unknown command 'stauts' (did you mean status? see --help)")
        p = run(["diagnose", "--durtion", "5s"], scenario=scenario_4gpu())
        self.assertEqual(p.returncode, 2)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("--durtion", p.stderr)
        self.assertIn("(did you mean --duration? see --help)", p.stderr)
        p = run(["ps", "--jsn"], scenario=scenario_4gpu())
        self.assertEqual(p.returncode, 2)
        self.assertIn("did you mean --json?", p.stderr)
        # Nothing near: no guess.
        p = run(["frobnicate"], scenario=scenario_4gpu())
        self.assertIn("unknown command 'frobnicate' (see --help)", p.stderr)

class WhoGpuFlag(E2E):
    def test_who_gpu_flag_is_the_positional(self):
        path = scenario_with(self.tmp.name, {1: [(unused_pid(), 2 * GiB)]})
        by_flag = run(["who", "--gpu", "1", "--json"], scenario=path)
        self.assertEqual(by_flag.returncode, 0, by_flag.stderr)
        self.assertEqual(json.loads(by_flag.stdout), json.loads(
            run(["who", "1", "--json"], scenario=path).stdout))
        self.assertEqual([g["gpu"] for g in json.loads(by_flag.stdout)["gpus"]], [1])
        self.assertEqual(run(["who", "1", "--gpu", "2"], scenario=path).returncode, 2)

    def test_every_gpu_flag_takes_an_index_uuid_pci_address_or_device_file(self):
        path = scenario_with(self.tmp.name, {1: [(unused_pid(), 2 * GiB)]})
        header, _ = load_scenario(path)
        gpu1 = next(g for g in header["gpus"] if g["index"] == 1)
        pci = gpu1["pci_bus_id"]
        short = pci.split(":", 1)[1].lower()  # "1a:00.0", as lspci writes it
        want = json.loads(run(["who", "1", "--json"], scenario=path).stdout)
        for name in (gpu1["uuid"], gpu1["uuid"].lower(), pci, short):
            p = run(["who", "--gpu", name, "--json"], scenario=path)
            self.assertEqual(p.returncode, 0, (name, p.stderr))
            self.assertEqual(json.loads(p.stdout), want, name)
        ps = run(["ps", "--json"], scenario=path)
        self.assertEqual(
            json.loads(run(["ps", "--gpu", pci, "--json"], scenario=path).stdout)["processes"],
            json.loads(run(["ps", "--gpu", "1", "--json"], scenario=path).stdout)["processes"])
        self.assertEqual(ps.returncode, 0, ps.stderr)
        p = run(["kill", "--gpu", gpu1["uuid"], "--dry-run", "--json"], scenario=path)
        self.assertEqual(json.loads(p.stdout)["plan"],
                         json.loads(run(["kill", "--gpu", "1", "--dry-run", "--json"],
                                        scenario=path).stdout)["plan"])
        # A name that is no GPU here is a usage error that lists the GPUs.
        for command in (["who"], ["ps"], ["kill", "--dry-run"], ["watch-leak", "--duration", "1s"]):
            p = run(command + ["--gpu", "GPU-00000000-nope"], scenario=path)
            self.assertEqual(p.returncode, 2, (command, p.stderr))
            self.assertIn("no GPU 'GPU-00000000-nope' here (its GPUs: 0 ", p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        p = run(["ps", "--gpu", "not-a-gpu"], scenario=path)
        self.assertEqual(p.returncode, 2)
        self.assertIn("PCI address", p.stderr)

    def test_every_gpu_flag_takes_a_list(self):
        sleepers = [subprocess.Popen(["sleep", "60"]) for _ in range(3)]
        for child in sleepers:
            self.addCleanup(child.wait)
            self.addCleanup(child.kill)
        a, b, c = (child.pid for child in sleepers)
        path = scenario_with(self.tmp.name, {1: [(a, 2 * GiB)], 2: [(b, GiB)],
                                             3: [(c, GiB)]})
        header, _ = load_scenario(path)
        uuid1 = next(g["uuid"] for g in header["gpus"] if g["index"] == 1)
        # who: the GPUs in the order asked, by any name, each once.
        p = run(["who", "2," + uuid1 + ",2", "--json"], scenario=path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([g["gpu"] for g in json.loads(p.stdout)["gpus"]], [2, 1])
        self.assertEqual(json.loads(run(["who", "--gpu", "1,2", "--json"],
                                        scenario=path).stdout)["gpus"],
                         json.loads(run(["who", "1,2", "--json"], scenario=path).stdout)["gpus"])
        # ps and kill: what each GPU of the list selects, and nothing else.
        pids = lambda args: sorted(
            r["pid"] for r in json.loads(run(args, scenario=path).stdout)["processes"])
        self.assertEqual(pids(["ps", "--gpu", "1,2", "--json"]), sorted([a, b]))
        plan = lambda gpus: sorted(
            t["pid"] for t in json.loads(run(["kill", "--gpu", gpus, "--dry-run", "--json"],
                                             scenario=path).stdout)["plan"]["targets"])
        self.assertEqual(plan("1,2"), sorted([a, b]))
        self.assertEqual(plan("3"), [c])
        # A listed index the host lacks is named; a list with --mig is a
        # usage error.
        for command in (["who"], ["watch-leak", "--duration", "1s"]):
            p = run(command + ["--gpu", "1,9"], scenario=path)
            self.assertEqual(p.returncode, 1, (command, p.stderr))
            self.assertIn("no GPU 9: this host has 4 GPU(s)", p.stderr)
        p = run(["diagnose", "--duration", "1s", "--serve", "none", "--gpu", "1,9"],
                scenario=path)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("GPU 9 is not in the window", p.stderr)
        p = run(["kill", "--gpu", "1,2", "--mig", "1", "--dry-run"], scenario=path)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("one GPU, not a list", p.stderr)

class KillJson(E2E):
    def test_kill_json_is_the_api_reply(self):
        gone = unused_pid()
        path = scenario_with(self.tmp.name, {2: [(gone, 6 * GiB)]})
        p = run(["kill", "--gpu", "2", "--dry-run", "--json"], scenario=path)
        self.assertEqual(p.returncode, 4, p.stderr)
        doc = json.loads(p.stdout)
        self.assertEqual(doc["exit_code"], 4)
        self.assertEqual(doc["message"], "Nothing to signal.")
        self.assertTrue(doc["dry_run"])
        self.assertIn("plan", doc)
        # It asks nothing: without --yes or --dry-run it is a usage error.
        p = run(["kill", "--gpu", "2", "--json"], scenario=path)
        self.assertEqual(p.returncode, 2, p.stdout)
        self.assertIn("--yes", p.stderr)


def over(text, width):
    return [l for l in text.split("\n") if len(l) > width]


class Width(E2E):
    """ps and status fit 80 columns; --wide shows everything."""

    def test_ps_and_status_fit_80_columns(self):
        env = {"COLUMNS": "80"}
        for cmd in (["ps"], ["status"]):
            p = run(cmd, scenario=scenario_4gpu(), env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(over(p.stdout, 80), [], p.stdout)
        ps = run(["ps", "--serve", "none"], scenario=scenario_4gpu(), env=env).stdout
        header = ps.split("\n")[0].split()
        # The scenario has no MIG and no per-process utilisation: left out.
        self.assertNotIn("MIG", header)
        self.assertNotIn("SM%", header)
        for col in ("GPU", "PID", "GPU-MEM", "COMMAND"):
            self.assertIn(col, header)
        self.assertIn("<-- NOT IN /proc", ps)
        wide = run(["ps", "--serve", "none", "--wide"], scenario=scenario_4gpu(), env=env).stdout
        self.assertIn("MIG", wide.split("\n")[0])
        self.assertTrue(over(wide, 80), wide)
        status = run(["status", "--wide"], scenario=scenario_4gpu(), env=env).stdout
        self.assertTrue(over(status, 80), status)
        # Broken between fields, never inside one.
        fitted = run(["status"], scenario=scenario_4gpu(), env=env).stdout
        for fact in ("GPU-5f0f6a2e-1c3b-4d8e-9a7f-0b1c2d3e4f01", "SM clock 1755 / 1980 MHz",
                     "retired pages pending off", "compute mode exclusive_process"):
            self.assertIn(fact, fitted)


class WhoResetOnce(E2E):
    def test_the_reset_paragraph_is_said_once(self):
        path = scenario_with(self.tmp.name, {0: [(unused_pid(), GiB)], 1: [(unused_pid(), GiB)]})
        p = run(["who"], scenario=path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.count("stop nvidia-persistenced"), 1, p.stdout)
        self.assertIn("`nvidia-smi --gpu-reset -i 0`", p.stdout)
        self.assertIn("`nvidia-smi --gpu-reset -i 1`", p.stdout)
        # One GPU: the whole paragraph, as before.
        one = run(["who", "0"], scenario=path).stdout
        self.assertEqual(one.count("stop nvidia-persistenced"), 1, one)
        self.assertNotIn("what a reset needs: below", one)


class ServeStartLog(E2E):
    def test_the_start_log_names_the_dashboard(self):
        from test_serve import Serve
        serve = Serve(scenario_4gpu(), ["--no-db"], tmp=self.tmp)
        try:
            line = serve.wait_log(r'msg="serving"')
            self.assertIn(f"dashboard=http://127.0.0.1:{serve.port}/ ", line)
        finally:
            serve.stop()


def flowing(screen):
    """The screen's text as one line: each line stripped, joined by a space
    (a wrapped sentence reads whole again)."""
    return re.sub(r"\s+", " ", " ".join(l.strip() for l in screen.split("\n")))


def cut_lines(screen):
    """The overlay's lines (below top's header line) cut at the right edge
    with top's mark."""
    return [l for l in screen.split("\n")[1:] if l.rstrip().endswith("~")]


class TopWrapping(E2E):
    """top's overlays wrap their text to the screen: no word is dropped at
    a line break and no line is cut with '~', whatever the width."""

    def setUp(self):
        super().setUp()
        from test_top import top_argv  # noqa: E402 (tmux helpers)
        from gd_tmux import Tmux
        self.top_argv, self.Tmux = top_argv, Tmux
        self.panes = []

    def tearDown(self):
        for p in self.panes:
            p.close()
        super().tearDown()

    def top(self, scenario, width, height=60):
        pane = self.Tmux(self.tmp.name, self.top_argv(),
                         env={"FAKE_NVML_SCENARIO": scenario, "LANG": "C.UTF-8"},
                         width=width, height=height)
        self.panes.append(pane)
        return pane

    def test_finding_help_and_who_lose_no_word(self):
        gone = unused_pid()
        path = scenario_with(self.tmp.name, {0: [(gone, 38 * GiB)]}, used={0: 38 * GiB})
        for width in (80, 160):
            pane = self.top(path, width)
            pane.wait_for(r"CRIT\s+orphaned-memory", timeout=30)
            pane.keys("Tab")
            pane.keys("Enter")
            s = pane.wait_for(lambda t: "action:" in t and
                              "`gpudoctor diagnose` explains" in flowing(t))
            text = flowing(s)
            self.assertIn("38.0 GiB used, 38.0 GiB of it not held by any live process "
                          "(driver allowance 1.0 GiB)", text)
            self.assertIn(f"NVML still lists pid {gone} (state missing, 38.0 GiB in", text)
            self.assertIn("`gpudoctor who 0`", text)
            self.assertEqual(cut_lines(s), [], s)
            pane.keys("Escape", "h")
            s = pane.wait_for(lambda t: "Keys" in t and "Colour: set NO_COLOR" in flowing(t))
            self.assertIn("kill the tagged processes, or the selected one: SIGTERM, then "
                          "SIGKILL after 10 s; the same checks as `gpudoctor kill`, asked "
                          "first, and whether the GPU memory was freed", flowing(s))
            self.assertEqual(cut_lines(s), [], s)
            pane.keys("Escape", "w")
            s = pane.wait_for(lambda t: "Who holds GPU 0" in t and
                              "otherwise reboot)" in flowing(t))
            self.assertIn("reset it: `nvidia-smi --gpu-reset -i 0` (root; nothing may have "
                          "the GPU open", flowing(s))
            self.assertEqual(cut_lines(s), [], s)
            pane.close()


if __name__ == "__main__":
    unittest.main()
