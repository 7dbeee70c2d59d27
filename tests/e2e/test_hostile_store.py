"""The history tools against hostile files, end to end: a crafted history
block (a few KB that claim tens of millions of samples) must cost `db
check`, `export` and `db repair` little memory and be reported corrupt;
`db repair` must create nothing and follow no symlink; a history of a
schema version this gpudoctor does not know is refused by every tool, and
by serve, with its bytes unchanged."""
import json
import os
import re
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
import unittest

from gd_e2e import FAKE_NVML, GPUDOCTOR, RSS_LIMIT_FACTOR
from test_export import STORE_FILL, TRACEGEN
from test_serve import Serve, first_sample_scenario

# Peak RSS a tool may reach on one crafted block (normal build; sanitizers
# multiply it).
RSS_LIMIT_KIB = 200 * 1024 * RSS_LIMIT_FACTOR


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zstd_frame(head, zeros):
    """A zstd frame of `head` then `zeros` zero bytes, with its content size
    in the header: RLE blocks, so 180 MB of zeros cost a few KB."""
    out = bytearray(b"\x28\xb5\x2f\xfd")
    out.append(0xE0)  # single segment, 8-byte content size, no checksum
    out += struct.pack("<Q", len(head) + zeros)
    blocks = [(0, head)]  # (type, payload): 0 raw, 1 RLE
    while zeros:
        n = min(zeros, 128 * 1024)
        blocks.append((1, n))
        zeros -= n
    for i, (kind, payload) in enumerate(blocks):
        last = 1 if i == len(blocks) - 1 else 0
        size = len(payload) if kind == 0 else payload
        out += (last | kind << 1 | size << 3).to_bytes(3, "little")
        out += payload if kind == 0 else b"\x00"
    return bytes(out)


def crafted_numeric(samples):
    """Block format 3 claiming `samples` samples, a constant time column
    (one value said once), then zeros so the count looks backed by bytes."""
    head = (varint(3) + varint(samples) + bytes([1, 1, 3]) +
            varint(2 * 1732262400))
    return zstd_frame(head, samples + 64)


def peak_rss_kib(args):
    """(completed process, peak RSS in KiB) of one gpudoctor run, measured
    in a fresh python so no other child counts."""
    probe = ("import resource, subprocess, sys\n"
             "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
             "sys.stdout.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
             " + '\\n' + str(p.returncode) + '\\n' + p.stdout)\n"
             "sys.stderr.write(p.stderr)\n")
    p = subprocess.run([sys.executable, "-c", probe, GPUDOCTOR] + args,
                       capture_output=True, text=True, timeout=300)
    rss, rc, out = p.stdout.split("\n", 2)
    return subprocess.CompletedProcess(args, int(rc), out, p.stderr), int(rss)


def gd(*args):
    return subprocess.run([GPUDOCTOR] + list(args), capture_output=True, text=True,
                          timeout=120)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


class HostileCase(unittest.TestCase):
    def setUp(self):
        self.assertTrue(os.path.exists(STORE_FILL) and os.path.exists(TRACEGEN),
                        "gd_store_fill / gpudoctor-tracegen not built")
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def make_db(self, name="h.db"):
        """A real history: 15 minutes of 2 GPUs at 1 s, one sealed block and
        pending batches."""
        trace = self.path("t.jsonl")
        if not os.path.exists(trace):
            start = (int(time.time()) // 600 - 3) * 600
            subprocess.run([TRACEGEN, "--scenario", "memory-leak", "--gpus", "2",
                            "--duration", "15m", "--interval", "1s", "--start",
                            str(start), "-o", trace, "-q"], check=True, timeout=120)
        db = self.path(name)
        p = subprocess.run([STORE_FILL, "--db", db, "--trace", trace],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        return db

    def assert_one_line(self, text):
        self.assertEqual(len(text.strip().splitlines()), 1, text)


class CraftedBlock(HostileCase):
    def test_tools_reject_a_block_claiming_millions_of_samples_in_little_memory(self):
        db = self.make_db()
        # 30 million samples: 30 MB of zeros behind a 7-byte header, 1.2 KB
        # of zstd (the red team's 180 million is refused by its size alone).
        for samples in (30_000_000, 180_000_000):
            blob = crafted_numeric(samples)
            self.assertLess(len(blob), 64 * 1024)
            with sqlite3.connect(db) as c:
                c.execute("UPDATE blocks SET num = ? WHERE id = (SELECT min(id) FROM blocks)",
                          (blob,))
            c.close()

            p, rss = peak_rss_kib(["db", "check", "--db", db])
            print(f"{samples} samples: db check peak RSS {rss / 1024:.0f} MiB",
                  file=sys.stderr)
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            self.assertRegex(p.stdout, r"corrupt blocks id=\d+ .*(samples \(a block has at "
                             r"most 4096\)|decompresses to \d+ bytes \(at most 32 MiB\))")
            self.assertLess(rss, RSS_LIMIT_KIB, f"db check used {rss} KiB")

            out = self.path("out.jsonl")
            p, rss = peak_rss_kib(["export", "--db", db, "--since", "0", "-o", out])
            print(f"{samples} samples: export peak RSS {rss / 1024:.0f} MiB",
                  file=sys.stderr)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("skipped 1 corrupt history block", p.stderr)
            self.assertLess(rss, RSS_LIMIT_KIB, f"export used {rss} KiB")

        p, rss = peak_rss_kib(["db", "repair", "--db", db])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("moved 1 corrupt row(s) to quarantine", p.stdout)
        self.assertLess(rss, RSS_LIMIT_KIB, f"db repair used {rss} KiB")
        with sqlite3.connect(db) as c:
            self.assertEqual(c.execute("SELECT count(*) FROM quarantine").fetchone()[0], 1)
        c.close()
        # Repaired: nothing left to move, said as JSON too.
        p = gd("db", "repair", "--db", db, "--json")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        doc = json.loads(p.stdout)
        self.assertEqual((doc["clean"], doc["repaired"], doc["quarantined_rows"]), (True, 0, 1))


class RepairPaths(HostileCase):
    def test_missing_path_is_not_created(self):
        missing = self.path("missing.db")
        p = gd("db", "repair", "--db", missing)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assert_one_line(p.stderr)
        self.assertIn(missing, p.stderr)
        self.assertEqual(sorted(os.listdir(self.tmp.name)), [])

    def test_symlinks_are_not_followed(self):
        real = self.make_db()
        before = read_bytes(real)
        link = self.path("link.db")
        os.symlink(real, link)
        p = gd("db", "repair", "--db", link)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assert_one_line(p.stderr)
        self.assertIn(f"{link}: is a symlink", p.stderr)
        self.assertEqual(read_bytes(real), before)

        target = self.path("target.db")
        dangling = self.path("dangling.db")
        os.symlink(target, dangling)
        p = gd("db", "repair", "--db", dangling)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertFalse(os.path.lexists(target), "repair created the link's target")

        # A side file planted as a symlink: SQLite would write through it.
        elsewhere = self.path("elsewhere")
        os.symlink(elsewhere, real + "-journal")
        p = gd("db", "repair", "--db", real)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn(f"{real}-journal: is a symlink", p.stderr)
        self.assertFalse(os.path.lexists(elsewhere))
        self.assertEqual(read_bytes(real), before)


class UnknownVersion(HostileCase):
    def test_every_tool_refuses_and_touches_nothing(self):
        for version in (99, 0, -5):
            db = self.make_db(f"v{version}.db")
            with sqlite3.connect(db) as c:
                c.execute(f"PRAGMA user_version={version}")
            c.close()
            before = read_bytes(db)
            said = f"{db}: history schema version {version} "
            for args in (["db", "check", "--db", db], ["db", "repair", "--db", db],
                         ["export", "--db", db, "--since", "0", "-o",
                          self.path("out.jsonl")]):
                p = gd(*args)
                self.assertEqual(p.returncode, 1, (args, p.stdout, p.stderr))
                self.assert_one_line(p.stderr)
                self.assertIn(said, p.stderr)
                self.assertNotIn("clean", p.stdout)
                self.assertEqual(read_bytes(db), before, args)

            # serve keeps monitoring without that history, and says why.
            scenario, _, _ = first_sample_scenario(self.tmp.name)
            s = Serve(scenario, ["--db", db])
            try:
                line = s.wait_log(r'msg="history not usable; serving without it"')
                self.assertIn(said, line)
                status, hz = s.get_json("/healthz")
                self.assertEqual(status, 200, hz)
                self.assertEqual(hz["status"], "degraded", hz)
                self.assertIn({"component": "store", "problem": "not usable"},
                              hz["degraded"])
                self.assertFalse(hz["store"]["usable"])
                status, _, body = s.get("/api/v1/history?metric=gpu.util_pct&since=0")
                self.assertEqual(status, 503, body)
                self.assertNotIn(self.tmp.name, body)
                time.sleep(1)  # samples that must not reach the file
                self.assertEqual(s.stop(), 0)
            finally:
                s.kill()
            self.assertEqual(read_bytes(db), before, "serve wrote to the history")


if __name__ == "__main__":
    unittest.main()
