"""The code a running `top` executes each second is laid out first in the
gpudoctor binary (src/cli/hot-functions.txt, src/cli/CMakeLists.txt), so
that once `top` lets go of its start-up code its resident code is that
region. Registered only for builds that order the code (GCC, lld, no
sanitizer)."""
import os
import subprocess
import unittest

from gd_e2e import GPUDOCTOR

HOT = os.environ.get("GD_HOT_FUNCTIONS", "")


def text_symbols(binary):
    out = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True,
                         check=True).stdout
    symbols = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            symbols.append((int(parts[0], 16), parts[2]))
    return symbols


class CodeOrder(unittest.TestCase):
    def setUp(self):
        self.assertTrue(HOT and os.path.exists(HOT), "GD_HOT_FUNCTIONS names the list")
        with open(HOT) as f:
            self.hot = {line.strip() for line in f if line.strip()}
        self.symbols = text_symbols(GPUDOCTOR)

    def test_the_list_names_this_code(self):
        # A list written before the code drifted far keeps a stale order:
        # regenerate it with bench/top/hot_functions.py.
        defined = {name for _, name in self.symbols}
        missing = sorted(self.hot - defined)
        self.assertGreater(len(self.hot), 300)
        self.assertLessEqual(len(missing), len(self.hot) // 10,
                             f"{len(missing)} of {len(self.hot)} listed functions are not in "
                             f"{GPUDOCTOR}, e.g. {missing[:3]}: run bench/top/hot_functions.py")

    def test_listed_functions_come_first(self):
        listed = {addr for addr, name in self.symbols if name in self.hot}
        self.assertTrue(listed)
        end = max(listed)
        # Within the region, every function is a listed one (or another name
        # of one: a constructor's C1 and C2 share their code).
        strangers = [name for addr, name in self.symbols if addr < end and addr not in listed]
        self.assertEqual(strangers, [], "unlisted functions inside the hot region")
        # And the region is the start of the code, a small part of it.
        first = min(addr for addr, _ in self.symbols)
        last = max(addr for addr, _ in self.symbols)
        self.assertLessEqual(min(listed) - first, 64 << 10)
        self.assertLess(end - first, (last - first) // 2)


if __name__ == "__main__":
    unittest.main()
