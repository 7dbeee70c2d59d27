"""The command table (issue 41): every command that prints a result has
--json, a man page and completions in bash, zsh and fish, all generated
from the table the parser itself uses, and no flag name means two things
across commands. The completions run in the real shells."""
import os
import re
import subprocess
import tempfile
import unittest

from gd_e2e import E2E, GPUDOCTOR, run

# Commands that print no result of their own to read, and why; every other
# command must take --json.
NO_JSON = {
    "top": "an interactive screen (serve's API answers in JSON)",
    "serve": "a daemon: its HTTP API answers in JSON",
    "record": "writes a trace, JSON lines, to its file",
    "export": "writes a trace, JSON lines, to its file or stdout",
    "help": "prints the help",
    "man": "prints a manual page",
    "completion": "prints a shell script",
}


def listed(help_text):
    """The commands a --help text lists."""
    if "Subcommands:" not in help_text:
        return []
    return re.findall(r"(?m)^  ([a-z][a-z-]*)\s", help_text.split("Subcommands:", 1)[1])


def commands():
    """The commands `gpudoctor help` lists, in its order."""
    return listed(run(["help"], check=True).stdout)


def subcommands(command):
    """A command's own commands (db: check, repair)."""
    return listed(run([command, "--help"], check=True).stdout)


def help_flags(*command):
    """The long flags `COMMAND --help` shows (its own, not the globals')."""
    out = run(list(command) + ["--help"], check=True).stdout
    out = out.split("Subcommands:", 1)[0]
    names = re.findall(r"(?m)^\s+((?:-{1,2}[a-z][a-z0-9-]*,?\s?)+)", out)
    return {n for group in names for n in re.findall(r"--[a-z][a-z0-9-]*", group)}


def man_flags(page, section="OPTIONS"):
    """flag -> value kind ("" for a switch) of a roff page's section."""
    own = page.split(f".SH {section}\n", 1)[1].split(".SH ", 1)[0]
    flags = {}
    for names, value in re.findall(r"\.TP\n(\\fB.*?)(?: \\fI(.*?)\\fR)?\n", own):
        for name in re.findall(r"\\fB(\\-\\-[a-z0-9\\-]+)\\fR", names):
            flags[name.replace("\\-", "-")] = value.replace("\\-", "-")
    return flags


class CommandTable(E2E):
    def setUp(self):
        super().setUp()
        self.commands = commands()
        self.assertIn("diagnose", self.commands)
        self.assertIn("serve", self.commands)

    def test_every_command_prints_a_result_in_json(self):
        missing = []
        for c in self.commands:
            if c in NO_JSON:
                continue
            # A command of commands: each of its own prints the result.
            for words in [[c, s] for s in subcommands(c)] or [[c]]:
                if "--json" not in help_flags(*words):
                    missing.append(" ".join(words))
        self.assertEqual(missing, [], "commands without --json")

    def test_every_command_has_a_man_page_with_every_flag(self):
        pages = os.path.join(self.tmp.name, "man1")
        p = run(["man", "--dir", pages])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(os.listdir(pages)),
                         sorted(["gpudoctor.1"] + [f"gpudoctor-{c}.1" for c in self.commands]))
        for c in self.commands:
            page = run(["man", c], check=True).stdout
            with open(os.path.join(pages, f"gpudoctor-{c}.1")) as f:
                self.assertEqual(f.read(), page, c)
            self.assertIn(f".TH GPUDOCTOR-{c.upper()} 1", page)
            self.assertEqual(set(man_flags(page)), help_flags(c), c)
            for s in subcommands(c):
                self.assertEqual(set(man_flags(page, f"{c} {s}".upper())),
                                 help_flags(c, s), f"{c} {s}")
            # man's own checker: groff warnings (bad escapes, macros) fail.
            r = subprocess.run(["man", "--warnings", "-l", os.path.join(pages, f"gpudoctor-{c}.1")],
                               env=dict(os.environ, MANWIDTH="80", MANPAGER="cat"),
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stderr, "", c)
            self.assertIn("--", r.stdout)
        top = run(["man"], check=True).stdout
        for c in self.commands:
            self.assertIn(f"\\fBgpudoctor\\-{c.replace('-', chr(92) + '-')}\\fR(1)", top)
        p = run(["man", "diagnsoe"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("did you mean diagnose?", p.stderr)

    def test_no_flag_name_means_two_things(self):
        kinds = {}  # flag -> {value kind: [commands]}
        for c in self.commands:
            page = run(["man", c], check=True).stdout
            sections = ["OPTIONS"] + [f"{c} {s}".upper() for s in subcommands(c)]
            for section in sections:
                for flag, value in man_flags(page, section).items():
                    kinds.setdefault(flag, {}).setdefault(value, []).append(c)
        twice = {f: k for f, k in kinds.items() if len(k) > 1}
        self.assertEqual(twice, {}, "a flag that is a switch in one command and takes a "
                                    "value in another, or values of two kinds")
        # --user is a Unix user wherever it appears.
        for c in kinds.get("--user", {}).get("TEXT", []):
            page = run(["man", c], check=True).stdout
            text = page.split("\\fB\\-\\-user\\fR", 1)[1].split(".TP", 1)[0].lower()
            self.assertNotIn("prometheus", text, c)


class Completions(E2E):
    def script(self, shell):
        path = os.path.join(self.tmp.name, f"gpudoctor.{shell}")
        with open(path, "w") as f:
            f.write(run(["completion", shell], check=True).stdout)
        return path

    def bash(self, *words):
        """What bash completes for the command line `words` (the last one is
        the word being completed), through bash-completion's loader."""
        script = self.script("bash")
        line = " ".join(f"'{w}'" for w in words)
        p = subprocess.run(
            ["bash", "-c", "source /usr/share/bash-completion/bash_completion; "
             f'source "{script}"; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; '
             '_gpudoctor; printf "%s\\n" "${COMPREPLY[@]}"'],
            capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.split()

    def test_bash_completes_commands_and_each_commands_flags(self):
        self.assertEqual(self.bash("gpudoctor", "dia"), ["diagnose"])
        self.assertEqual(self.bash("gpudoctor", "diagnose", "--min"), ["--min-severity"])
        # Global flags after the command too (they may follow it).
        self.assertIn("--interval", self.bash("gpudoctor", "status", "--inter"))
        self.assertEqual(self.bash("gpudoctor", "help", "wat"), ["watch-leak"])
        for c in commands():
            offered = set(self.bash("gpudoctor", c, "--"))
            self.assertLessEqual(help_flags(c), offered, c)
            for s in subcommands(c):
                self.assertLessEqual(help_flags(c, s), offered, f"{c} {s}")
        self.assertIn("repair", self.bash("gpudoctor", "db", "re"))

    def test_fish_completes_commands_and_flags(self):
        script = self.script("fish")

        def fish(line):
            p = subprocess.run(["fish", "--no-config", "-c",
                                f"source {script}; complete -C '{line}'"],
                               capture_output=True, text=True, timeout=30,
                               env=dict(os.environ, HOME=self.tmp.name))
            self.assertEqual(p.returncode, 0, p.stderr)
            return [l.split("\t")[0] for l in p.stdout.splitlines()]

        self.assertIn("diagnose", fish("gpudoctor dia"))
        self.assertIn("--min-severity", fish("gpudoctor diagnose --min"))
        self.assertNotIn("--min-severity", fish("gpudoctor status --min"))

    def test_zsh_loads_it_as_gpudoctors_completion(self):
        folder = tempfile.mkdtemp(dir=self.tmp.name)
        with open(os.path.join(folder, "_gpudoctor"), "w") as f:
            f.write(run(["completion", "zsh"], check=True).stdout)
        p = subprocess.run(["zsh", "-n", os.path.join(folder, "_gpudoctor")],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = subprocess.run(
            ["zsh", "-f", "-c", f"fpath=({folder} $fpath); autoload -Uz compinit; "
             f"compinit -u -d {folder}/.zcompdump; print -r -- $_comps[gpudoctor]"],
            capture_output=True, text=True, timeout=30, env=dict(os.environ, HOME=self.tmp.name))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "_gpudoctor")

    def test_a_shell_it_does_not_know_is_a_usage_error(self):
        p = run(["completion", "tcsh"])
        self.assertEqual(p.returncode, 2)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)


if __name__ == "__main__":
    unittest.main()
