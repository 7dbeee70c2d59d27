"""The shipped binaries carry the hardening distributions build with
(CMakeLists.txt): position-independent, full RELRO with immediate binding,
a stack protector, fortified libc calls. Read back from the ELF files with
readelf, as a distribution's packaging checks (lintian's hardening tags)
do."""
import os
import re
import subprocess
import unittest

from gd_e2e import GPUDOCTOR


def readelf(*args):
    p = subprocess.run(["readelf", "--wide"] + list(args), capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        raise AssertionError(f"readelf {' '.join(args)}: {p.stderr.strip()}")
    return p.stdout


class Hardening(unittest.TestCase):
    def binaries(self):
        full = os.path.join(os.path.dirname(GPUDOCTOR), "gpudoctor-full")
        found = [b for b in (GPUDOCTOR, full) if os.path.exists(b)]
        self.assertIn(GPUDOCTOR, found, f"{GPUDOCTOR} not built")
        return found

    def test_pie_relro_bind_now(self):
        for b in self.binaries():
            self.assertRegex(readelf("-h", b), r"Type:\s+DYN", f"{b} is not PIE")
            self.assertIn("GNU_RELRO", readelf("-l", b), b)
            dynamic = readelf("-d", b)
            self.assertTrue(re.search(r"\(FLAGS\)\s.*BIND_NOW", dynamic) or
                            re.search(r"\(FLAGS_1\)\s.*NOW", dynamic), f"{b}: no BIND_NOW")
            self.assertRegex(readelf("-d", b), r"\(FLAGS_1\)\s.*PIE", b)

    def test_stack_protector_and_fortified_calls(self):
        for b in self.binaries():
            symbols = readelf("--dyn-syms", b)
            self.assertIn("__stack_chk_fail", symbols, f"{b}: no stack protector")
            fortified = set(re.findall(r"\b(__\w+_chk)\b", symbols)) - {"__stack_chk_fail"}
            self.assertTrue(fortified, f"{b}: no fortified libc call (__*_chk)")


if __name__ == "__main__":
    unittest.main()
