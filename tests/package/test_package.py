"""The release bundle and the .deb that scripts/package.sh made (package.build,
tests/package/CMakeLists.txt): the glibc floor of everything that ships, the
libraries resolved inside the bundle or from the base system only, what the
bundle holds, the unpacked bundle running its commands with an empty
environment, the .deb's and the .rpm's metadata and payload, the .rpm
unpacked and run.

Every missing prerequisite fails; nothing is skipped."""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
import unittest
import urllib.request

OUT = os.environ.get("GD_PACKAGE_OUT", "")
VERSION = os.environ.get("GD_VERSION", "")
FAKE_NVML = os.environ.get("FAKE_NVML_LIB", "")
FAKE_CUDA = os.environ.get("FAKE_CUDA_LIB", "")
DATA_DIR = os.environ.get("GD_TEST_DATA", "")

# The highest symbol versions anything shipped may ask for: glibc 2.34
# (Ubuntu 22.04, RHEL/Rocky 9) and the libstdc++ of GCC 11 (GLIBCXX_3.4.29,
# RHEL/Rocky 9; Debian 12 and Ubuntu 24.04 have newer ones).
GLIBC_FLOOR = (2, 34)
GLIBCXX_FLOOR = (3, 4, 29)

# What a binary of the bundle may take from the system rather than from the
# bundle's lib/. glibc's own libraries: glibc is the floor itself, cannot be
# bundled (ld.so, libc and the kernel interface must match each other) and
# is on every system. The C++ runtime of GCC (libstdc++, libgcc_s): on every
# system the floor names (GLIBCXX_3.4.29 from RHEL/Rocky 9; the binaries link
# libstdc++ in, libgpudoctor-pods.so still loads it), and Debian 12's own
# libstdc++.so.6 asks for glibc 2.36, so bundling it would break the floor.
# linux-vdso is the kernel's, not a file.
BASE_LIBS = {
    "linux-vdso.so.1", "ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6",
    "libpthread.so.0", "libdl.so.2", "librt.so.1",
    "libstdc++.so.6", "libgcc_s.so.1",
}


def version_tuple(text):
    return tuple(int(p) for p in text.split("."))


def tarball():
    paths = glob.glob(os.path.join(OUT, "gpudoctor-*-linux-x86_64.tar.gz"))
    if len(paths) != 1:
        raise AssertionError(f"expected one bundle in {OUT!r} (package.build), found {paths}")
    return paths[0]


def deb_file():
    paths = glob.glob(os.path.join(OUT, "gpudoctor_*_amd64.deb"))
    if len(paths) != 1:
        raise AssertionError(f"expected one .deb in {OUT!r} (package.build), found {paths}")
    return paths[0]


def rpm_file():
    paths = glob.glob(os.path.join(OUT, "gpudoctor-*-1.x86_64.rpm"))
    if len(paths) != 1:
        raise AssertionError(f"expected one .rpm in {OUT!r} (package.build), found {paths}")
    return paths[0]


def above_floor(objdump_t, prefix, floor):
    """(symbol, version) for each symbol of `objdump -T` output taken from
    another object (*UND*) with a PREFIX_ version above FLOOR."""
    found = []
    for line in objdump_t.splitlines():
        if "*UND*" not in line:
            continue
        m = re.search(rf"[( ]{prefix}_([0-9][0-9.]*)\)?\s+(\S+)\s*$", line)
        if m and version_tuple(m.group(1)) > floor:
            found.append((m.group(2), f"{prefix}_{m.group(1)}"))
    return found


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def tool(*args, **kw):
    """Runs a tool the test needs; fails naming it when it is missing."""
    try:
        return subprocess.run(list(args), capture_output=True, text=True, check=True,
                              timeout=kw.get("timeout", 60), env=kw.get("env"))
    except FileNotFoundError:
        raise AssertionError(f"{args[0]} not found: the package tests need it "
                             "(scripts/install-deps.sh --test)")


class Unpacked(unittest.TestCase):
    """The bundle unpacked into a temporary directory of its own."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="gd_bundle_")
        with tarfile.open(tarball()) as t:
            t.extractall(cls.tmp.name)
        tops = os.listdir(cls.tmp.name)
        assert len(tops) == 1, tops
        cls.root = os.path.join(cls.tmp.name, tops[0])
        cls.bin = os.path.join(cls.root, "bin", "gpudoctor")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def elves(self):
        found = [p for d in ("bin", "lib") for p in glob.glob(os.path.join(self.root, d, "*"))
                 if os.path.isfile(p) and is_elf(p)]
        self.assertGreaterEqual(len(found), 2, found)
        return found


class Floor(Unpacked):
    def test_no_symbol_newer_than_glibc_2_34_or_glibcxx_3_4_29(self):
        highest = {"GLIBC": (0,), "GLIBCXX": (0,)}
        offending = []
        for path in self.elves():
            rel = os.path.relpath(path, self.root)
            out = tool("objdump", "-T", path).stdout
            asked = [l for l in out.splitlines() if "*UND*" in l]
            for prefix, floor in (("GLIBC", GLIBC_FLOOR), ("GLIBCXX", GLIBCXX_FLOOR)):
                versions = [version_tuple(v) for l in asked
                            for v in re.findall(rf"[( ]{prefix}_([0-9][0-9.]*)", l)]
                if versions:
                    highest[prefix] = max(highest[prefix], max(versions))
                offending += [f"{rel}: {sym}@{v}" for sym, v in above_floor(out, prefix, floor)]
        # The measurement the docs quote, in the test log.
        print("highest asked:", {k: ".".join(map(str, v)) for k, v in highest.items()})
        self.assertEqual(offending, [], "above GLIBC_2.34 / GLIBCXX_3.4.29 (RHEL/Rocky 9):\n"
                         + "\n".join(offending))

    def test_the_check_names_file_and_symbol(self):
        # A line of objdump -T as GCC 12's libstdc++ would make it: the check
        # above must catch it and name the symbol, not only the version.
        line = ("0000000000000000      DF *UND*\t0000000000000000 (GLIBCXX_3.4.30) "
                "_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE\n"
                "0000000000000000      DF *UND*\t0000000000000000 (GLIBC_2.36) arc4random\n"
                "0000000000000000      DF *UND*\t0000000000000000 (GLIBC_2.34) pthread_create\n"
                "0000000000000000      DF *UND*\t0000000000000000  GLIBC_2.2.5 memcpy\n")
        self.assertEqual(above_floor(line, "GLIBCXX", GLIBCXX_FLOOR),
                         [("_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE",
                           "GLIBCXX_3.4.30")])
        self.assertEqual(above_floor(line, "GLIBC", GLIBC_FLOOR), [("arc4random", "GLIBC_2.36")])

    def test_binaries_carry_their_cxx_runtime(self):
        # -static-libstdc++ (src/cli/CMakeLists.txt): the binaries themselves
        # ask the system for no libstdc++ at all.
        for b in ("gpudoctor", "gpudoctor-full"):
            out = tool("objdump", "-p", os.path.join(self.root, "bin", b)).stdout
            self.assertNotIn("libstdc++.so.6", out, b)
            self.assertNotRegex(out, r"GLIBCXX_|CXXABI_", b)


class Libraries(Unpacked):
    def test_every_library_resolves_inside_the_bundle_or_to_the_base_system(self):
        lib_dir = os.path.realpath(os.path.join(self.root, "lib"))
        for path in self.elves():
            out = tool("ldd", path, env={}).stdout
            rel = os.path.relpath(path, self.root)
            for line in out.splitlines():
                line = line.strip()
                if "=>" not in line:
                    continue  # the interpreter and the vDSO: no file to look up
                name, _, target = line.partition("=>")
                name, target = name.strip(), target.strip().split(" (")[0]
                with self.subTest(file=rel, lib=name):
                    self.assertNotEqual(target, "not found", f"{rel}: {line}")
                    inside = os.path.dirname(os.path.realpath(target)) == lib_dir
                    self.assertTrue(inside or name in BASE_LIBS,
                                    f"{rel} takes {name} from {target}, outside the bundle")

    def test_binaries_find_lib_through_origin(self):
        for b in ("gpudoctor", "gpudoctor-full"):
            out = tool("readelf", "-d", os.path.join(self.root, "bin", b)).stdout
            self.assertRegex(out, r"R(UN)?PATH.*\[\$ORIGIN/\.\./lib\]", b)

    def test_the_pods_library_loads_from_the_bundle_alone(self):
        """libgpudoctor-pods.so (dlopen'ed by gpudoctor on Kubernetes) loads
        with an empty environment, every gRPC library it needs found in lib/.
        The shipped binary dlopens it as it dlopens NVML (--nvml-lib): once
        loaded, the library lacks nvmlInit, which gpudoctor says; a library
        that could not load would be "cannot load ..." instead."""
        lib = os.path.join(self.root, "lib", "libgpudoctor-pods.so")
        self.assertTrue(os.path.exists(lib), "lib/libgpudoctor-pods.so is not bundled")
        p = subprocess.run([os.path.join(self.root, "bin", "gpudoctor"), "--nvml-lib", lib,
                            "--kmsg", "none", "status", "--json"],
                           env={}, capture_output=True, text=True, timeout=60)
        # status's exit code for "NVML did not start" is not the point here.
        self.assertTrue(p.stdout, p.stderr)
        error = json.loads(p.stdout.splitlines()[0]).get("nvml_error", "")
        self.assertIn("exports neither nvmlInit", error, p.stdout[:2000])

    def test_no_glibc_library_is_bundled(self):
        bundled = set(os.listdir(os.path.join(self.root, "lib")))
        self.assertFalse(bundled & BASE_LIBS, bundled & BASE_LIBS)
        self.assertIn("libmicrohttpd.so.12", bundled)  # serve's HTTP server
        self.assertNotIn("libcrypt.so.1", bundled)  # linked statically (docs/install.md)


class Contents(Unpacked):
    def test_version_agrees_with_the_project(self):
        p = subprocess.run([self.bin, "--version"], env={}, capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout.strip(), rf"^gpudoctor {re.escape(VERSION)} \(commit "
                         r"([0-9a-f]{4,}|unknown), built \d{4}-\d{2}-\d{2}\)$")
        self.assertIn(f"gpudoctor-{VERSION}-linux-x86_64", os.path.basename(tarball()))
        with open(os.path.join(self.root, "VERSION")) as f:
            self.assertEqual(f.read(), p.stdout)

    def test_deploy_docs_and_licenses(self):
        r = self.root
        self.assertTrue(os.path.isfile(os.path.join(r, "deploy/systemd/gpudoctor.service")))
        self.assertTrue(os.path.isfile(os.path.join(r, "deploy/prometheus/gpudoctor-rules.yml")))
        self.assertTrue(os.path.isfile(os.path.join(r, "docs/install.md")))
        with open(os.path.join(r, "docs/gpudoctor.txt")) as f:
            commands = re.findall(r"^  ([a-z][a-z-]*)  ", f.read().split("Subcommands:")[1],
                                  re.M)
        for c in ("status", "diagnose", "burn", "serve", "export", "db"):
            self.assertIn(c, commands)
        for c in commands:
            with open(os.path.join(r, f"docs/gpudoctor-{c}.txt")) as f:
                self.assertIn(f"\nUsage: gpudoctor {c} ", f.read(), c)
        self.assertTrue(os.path.isfile(os.path.join(r, "licenses/gpudoctor.LICENSE")))
        # One Debian copyright file per package a bundled library comes from:
        # at least one, and each names a licence.
        copyrights = glob.glob(os.path.join(r, "licenses/*/copyright"))
        self.assertGreaterEqual(len(copyrights), 5, copyrights)
        pkgs = {os.path.basename(os.path.dirname(c)) for c in copyrights}
        for pkg in ("libmicrohttpd12", "libssl3", "libsqlite3-0", "libzstd1"):
            self.assertIn(pkg, pkgs)
        # And those of what is linked in (static archives, header-only).
        for pkg in ("libyaml-cpp-dev", "libcrypt-dev", "libfmt-dev", "libspdlog-dev",
                    "libtomlplusplus-dev"):
            self.assertIn(pkg, pkgs)
        self.assertTrue([p for p in pkgs if re.fullmatch(r"libstdc\+\+-[0-9]+-dev", p)], pkgs)
        with open(os.path.join(r, "licenses/cpp-httplib/LICENSE")) as f:
            self.assertIn("MIT License", f.read())
        with open(os.path.join(r, "licenses/cpp-httplib/copyright")) as f:
            self.assertIn("Upstream-Name: cpp-httplib", f.read())
        with open(os.path.join(r, "licenses/simdjson/LICENSE")) as f:
            self.assertIn("Apache License", f.read())
        with open(os.path.join(r, "licenses/simdjson/copyright")) as f:
            self.assertIn("Source: https://github.com/lemire/simdjson", f.read())
        for c in copyrights:
            with open(c, errors="replace") as f:
                self.assertRegex(f.read(), r"(?i)licen[cs]e", c)


class Runs(Unpacked):
    """The unpacked bundle under `env -i`: the only variables are those that
    point the project's fakes at a scenario (FAKE_NVML_SCENARIO, and
    FAKE_CUDA_MEMORY_MIB for the fake libcuda); the fakes themselves are
    given by --nvml-lib / --cuda-lib."""

    def setUp(self):
        for what, path in (("FAKE_NVML_LIB", FAKE_NVML), ("FAKE_CUDA_LIB", FAKE_CUDA)):
            self.assertTrue(path and os.path.exists(path), f"{what}={path!r} not built")
        self.scenario = os.path.join(DATA_DIR, "scenario_4gpu.jsonl")
        self.assertTrue(os.path.exists(self.scenario), self.scenario)
        self.env = {"FAKE_NVML_SCENARIO": self.scenario}

    def gd(self, *args, env=None, timeout=60):
        cmd = [self.bin, "--nvml-lib", FAKE_NVML, "--kmsg", "none"] + list(args)
        return subprocess.run(cmd, env=env or self.env, capture_output=True, text=True,
                              timeout=timeout)

    def test_status(self):
        p = self.gd("status")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("GPU", p.stdout)

    def test_diagnose_checklist(self):
        p = self.gd("diagnose", "--checklist")
        # 0 ok, 1 warning, 2 critical: a verdict; 3 would be "could not".
        self.assertIn(p.returncode, (0, 1, 2), p.stderr)
        self.assertTrue(p.stdout.strip(), p.stderr)

    def test_burn_on_the_fake_libcuda(self):
        env = dict(self.env, FAKE_CUDA_MEMORY_MIB="16")
        p = self.gd("--interval", "500ms", "burn", "--cuda-lib", FAKE_CUDA, "--cublas-lib",
                    "none", "--duration", "2s", "--gpu", "1", "--force", "--json", env=env)
        self.assertIn(p.returncode, (0, 1, 2), p.stderr)
        self.assertEqual([g["gpu"] for g in json.loads(p.stdout)["gpus"]], [1])

    def test_serve_metrics_and_dashboard(self):
        cmd = [self.bin, "--nvml-lib", FAKE_NVML, "--kmsg", "none", "--interval", "200ms",
               "serve", "--listen", "127.0.0.1:0", "--no-db"]
        proc = subprocess.Popen(cmd, env=self.env, stderr=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, text=True, errors="replace")
        try:
            line, end = "", time.time() + 30
            while time.time() < end:
                line = proc.stderr.readline()
                if not line or 'msg="serving"' in line:
                    break
            m = re.search(r"listen=([0-9.]+):(\d+) version=\"?([^\" ]+)", line)
            self.assertTrue(m, f"no serving line: {line!r}")
            # serve names the version --version names (one generated header).
            self.assertEqual(m.group(3), VERSION, line)
            base = f"http://{m.group(1)}:{m.group(2)}"
            metrics = ""
            for _ in range(50):  # the first sample lands within an interval
                with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
                    metrics = r.read().decode()
                if "DCGM_FI_DEV_GPU_TEMP" in metrics:
                    break
                time.sleep(0.1)
            build_info = re.search(r'^gpudoctor_build_info\{[^\n]*\bversion="([^"]*)"',
                                   metrics, re.M)
            self.assertIsNotNone(build_info, "no gpudoctor_build_info on /metrics")
            self.assertEqual(build_info.group(1), VERSION)
            self.assertIn("DCGM_FI_DEV_GPU_TEMP", metrics)
            with urllib.request.urlopen(base + "/", timeout=10) as r:
                self.assertEqual(r.status, 200)
                self.assertIn("text/html", r.headers.get("Content-Type"))
                self.assertIn("<html", r.read().decode().lower())
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                rc = proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise
            proc.stderr.close()
        self.assertEqual(rc, 0)


class Deb(unittest.TestCase):
    def test_metadata(self):
        info = tool("dpkg-deb", "--info", deb_file()).stdout
        self.assertRegex(info, r"(?m)^ Package: gpudoctor$")
        self.assertRegex(info, rf"(?m)^ Version: {re.escape(VERSION)}$")
        self.assertRegex(info, r"(?m)^ Architecture: amd64$")
        # Only what the bundle does not carry: glibc and the C++ runtime.
        depends = re.search(r"(?m)^ Depends: (.*)$", info).group(1)
        self.assertEqual(depends, "libc6 (>= 2.34), libstdc++6 (>= 11), libgcc-s1")
        # No maintainer scripts: installing does not enable or start the service.
        for script in ("postinst", "preinst", "prerm", "postrm"):
            self.assertNotRegex(info, rf"\b{script}\b")

    def test_contents(self):
        listing = tool("dpkg-deb", "--contents", deb_file()).stdout
        for path in ("./opt/gpudoctor/bin/gpudoctor", "./opt/gpudoctor/bin/gpudoctor-full",
                     "./opt/gpudoctor/lib/libmicrohttpd.so.12",
                     "./usr/lib/systemd/system/gpudoctor.service",
                     # The manual and the completions, from the command table.
                     "./usr/share/man/man1/gpudoctor.1.gz",
                     "./usr/share/man/man1/gpudoctor-diagnose.1.gz",
                     "./usr/share/bash-completion/completions/gpudoctor",
                     "./usr/share/zsh/vendor-completions/_gpudoctor",
                     "./usr/share/fish/vendor_completions.d/gpudoctor.fish"):
            self.assertRegex(listing, rf"\s{re.escape(path)}(\s|$)", path)
        self.assertIn("./usr/bin/gpudoctor -> /opt/gpudoctor/bin/gpudoctor", listing)

    def test_extracted_binary_runs(self):
        with tempfile.TemporaryDirectory(prefix="gd_deb_") as root:
            tool("dpkg-deb", "-x", deb_file(), root)
            p = subprocess.run([os.path.join(root, "opt/gpudoctor/bin/gpudoctor"), "--version"],
                               env={}, capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(p.stdout.startswith(f"gpudoctor {VERSION} (commit "), p.stdout)
            with open(os.path.join(root, "usr/lib/systemd/system/gpudoctor.service")) as f:
                unit = f.read()
            self.assertIn("ExecStart=/usr/bin/gpudoctor serve", unit)
            self.assertNotIn("/usr/local/bin", unit)


class Rpm(unittest.TestCase):
    """The .rpm for RHEL/Rocky 9, read with Debian's rpm tools (package rpm)."""

    def test_files(self):
        listing = tool("rpm", "-qpl", rpm_file()).stdout.split()
        for path in ("/opt/gpudoctor/bin/gpudoctor", "/opt/gpudoctor/bin/gpudoctor-full",
                     "/opt/gpudoctor/lib/libmicrohttpd.so.12", "/usr/bin/gpudoctor",
                     "/usr/bin/gpudoctor-full", "/usr/lib/systemd/system/gpudoctor.service",
                     "/opt/gpudoctor/licenses/gpudoctor.LICENSE",
                     "/usr/share/man/man1/gpudoctor-serve.1.gz",
                     "/usr/share/bash-completion/completions/gpudoctor"):
            self.assertIn(path, listing)
        # Nothing of the build host's rpm conventions leaks in.
        self.assertFalse([p for p in listing if "/.build-id" in p or "/usr/local" in p])
        info = tool("rpm", "-qpi", rpm_file()).stdout
        self.assertRegex(info, r"(?m)^Name\s*: gpudoctor$")
        self.assertRegex(info, rf"(?m)^Version\s*: {re.escape(VERSION)}$")
        self.assertRegex(info, r"(?m)^Release\s*: 1$")
        self.assertRegex(info, r"(?m)^Architecture: x86_64$")

    def test_requires_only_what_is_not_bundled(self):
        requires = [l.strip() for l in tool("rpm", "-qpR", rpm_file()).stdout.splitlines()
                    if l.strip()]
        bundled = set(os.listdir(os.path.join(self._tree(), "opt/gpudoctor/lib")))
        allowed = re.compile(
            r"^(rpmlib\(.*\)|/bin/sh"
            # glibc and its loader, by soname: what RHEL's glibc package provides.
            r"|(libc|libm|libpthread|libdl|librt)\.so\.6?[0-9]*\(GLIBC_[0-9.]+\)\(64bit\)"
            r"|ld-linux-x86-64\.so\.2\((GLIBC_[0-9.]+)?\)\(64bit\)"
            # The C++ runtime libgpudoctor-pods.so loads (docs/install.md).
            r"|libstdc\+\+\.so\.6\(GLIBCXX_3\.4(\.[0-9]+)?\)\(64bit\)"
            r"|libgcc_s\.so\.1\(GCC_[0-9.]+\)\(64bit\))( [<>=]+ \S+)?$")
        for r in requires:
            with self.subTest(require=r):
                self.assertRegex(r, allowed)
                self.assertFalse([b for b in bundled if r.startswith(b + "(")], r)
        libc = [r for r in requires if r.startswith("libc.so.6(")]
        self.assertEqual(libc, ["libc.so.6(GLIBC_2.34)(64bit)"], requires)
        cxx = [r for r in requires if r.startswith("libstdc++.so.6(")]
        for r in cxx:
            v = version_tuple(re.search(r"GLIBCXX_([0-9.]+)", r).group(1))
            self.assertLessEqual(v, GLIBCXX_FLOOR, r)
        # No scriptlets: installing neither enables nor starts the service.
        scripts = tool("rpm", "-qp", "--scripts", rpm_file()).stdout
        self.assertEqual(scripts.strip(), "", scripts)
        provides = tool("rpm", "-qp", "--provides", rpm_file()).stdout.split("\n")
        self.assertFalse([p for p in provides if ".so" in p], provides)

    def _tree(self):
        if not hasattr(self, "_tmp"):
            self._tmp = tempfile.TemporaryDirectory(prefix="gd_rpm_")
            self.addCleanup(self._tmp.cleanup)
            for t in ("rpm2cpio", "cpio"):
                self.assertTrue(shutil.which(t), f"{t} not found (scripts/install-deps.sh --test)")
            cmd = (f"rpm2cpio '{rpm_file()}' | cpio -idm --quiet --no-absolute-filenames")
            p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=self._tmp.name,
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
        return self._tmp.name

    def test_extracted_binary_runs(self):
        root = self._tree()
        gd = os.path.join(root, "opt/gpudoctor/bin/gpudoctor")
        p = subprocess.run([gd, "--version"], env={}, capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith(f"gpudoctor {VERSION} (commit "), p.stdout)
        self.assertTrue(FAKE_NVML and os.path.exists(FAKE_NVML), f"FAKE_NVML_LIB={FAKE_NVML!r}")
        scenario = os.path.join(DATA_DIR, "scenario_4gpu.jsonl")
        p = subprocess.run([gd, "--nvml-lib", FAKE_NVML, "--kmsg", "none", "status"],
                           env={"FAKE_NVML_SCENARIO": scenario}, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("GPU", p.stdout)
        # gpudoctor-full, the half with the network and database libraries.
        full = os.path.join(root, "opt/gpudoctor/bin/gpudoctor-full")
        p = subprocess.run([full, "serve", "--help"], env={}, capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("--listen", p.stdout)
        self.assertEqual(os.readlink(os.path.join(root, "usr/bin/gpudoctor")),
                         "/opt/gpudoctor/bin/gpudoctor")
        with open(os.path.join(root, "usr/lib/systemd/system/gpudoctor.service")) as f:
            unit = f.read()
        self.assertIn("ExecStart=/usr/bin/gpudoctor serve", unit)


class Modes(unittest.TestCase):
    """Every entry of the bundle, the .deb and the .rpm is writable by its
    owner only, whatever the packager's umask: package.build ran under 002,
    package.build_umask000 under 000 (tests/package/CMakeLists.txt). A
    group-writable /opt/gpudoctor/lib would let a group load its own
    libraries into the binaries."""

    def outs(self):
        dirs = [OUT, OUT + "-umask000"]
        for d in dirs:
            self.assertTrue(os.path.isdir(d), f"{d} (package.build, package.build_umask000)")
        return dirs

    def assert_modes(self, where, entries):
        """entries: (path, ls-style permission string) of every entry."""
        self.assertGreater(len(entries), 20, where)
        loose = [f"{perm} {path}" for path, perm in entries
                 if perm[0] != "l" and (perm[5] == "w" or perm[8] == "w")]
        self.assertEqual(loose, [], f"{where}: group- or world-writable")
        for path, perm in entries:
            if perm[0] != "l" and path.rstrip("/").endswith(
                    ("bin/gpudoctor", "bin/gpudoctor-full", "/lib")):
                self.assertIn(perm[1:], ("rwxr-xr-x",), f"{where}: {path}")

    def test_bundle(self):
        for d in self.outs():
            path = glob.glob(os.path.join(d, "gpudoctor-*-linux-x86_64.tar.gz"))[0]
            with tarfile.open(path) as t:
                entries = [(m.name, ("d" if m.isdir() else "l" if m.issym() else "-") +
                            stat_text(m.mode)) for m in t.getmembers()]
            self.assert_modes(path, entries)

    def test_deb(self):
        for d in self.outs():
            path = glob.glob(os.path.join(d, "gpudoctor_*_amd64.deb"))[0]
            out = tool("dpkg-deb", "-c", path).stdout
            entries = [(l.split()[5], l.split()[0]) for l in out.splitlines() if l.strip()]
            self.assert_modes(path, entries)

    def test_rpm(self):
        for d in self.outs():
            path = glob.glob(os.path.join(d, "gpudoctor-*-1.x86_64.rpm"))[0]
            out = tool("rpm", "-qplv", path).stdout
            entries = [(l.split()[8], l.split()[0]) for l in out.splitlines() if l.strip()]
            self.assert_modes(path, entries)


def stat_text(mode):
    """0o755 -> "rwxr-xr-x"."""
    return "".join(c if mode & (1 << (8 - i)) else "-" for i, c in enumerate("rwxrwxrwx"))


if __name__ == "__main__":
    unittest.main()
