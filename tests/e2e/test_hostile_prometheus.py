"""The fleet commands (`report --prometheus`, `diagnose --prometheus`) and
`export --prometheus` against a hostile Prometheus the test runs
(fake_prometheus.py): replies of a few hundred kilobytes that used to take
gigabytes, bombs of the remote-read formats, escape bytes in error lines,
thousands of processes, a token file that is not one. Each run is watched
and killed past its memory bound, so a regression fails the test instead
of taking the machine down."""
import json
import os
import subprocess
import time
import unittest

from fake_prometheus import (MiB, STREAMED, FakePrometheus, chunked_series, frame,
                             matrix, read_response, run_watched, snappy_literal,
                             snappy_repeat, timeseries, varint, xor_chunk)
from gd_e2e import (E2E, GPUDOCTOR, RSS_LIMIT_FACTOR, RSS_SANITIZER_QUARANTINE,
                    read_trace)

# A report of one small node holds ~20 MiB; the attacks below reached
# 1.3-5.2 GB (GPU index amplification), 2.9 GB (samples bomb) and 0.73 GB
# (frames of empty series).
RSS_LIMIT = 150 * MiB * RSS_LIMIT_FACTOR + RSS_SANITIZER_QUARANTINE


class HostileCase(E2E):
    def serve(self, **kw):
        server = FakePrometheus(**kw)
        self.addCleanup(server.stop)
        return server

    def gd(self, server, *args, rss_limit=RSS_LIMIT, timeout=150):
        code, out, err, peak = run_watched(
            [GPUDOCTOR] + list(args[:1]) + ["--prometheus", server.url()] +
            list(args[1:]), self.tmp.name, rss_limit, timeout=timeout)
        print(f"{args[0]}: exit {code}, peak RSS {peak / MiB:.1f} MiB")
        self.assertLess(peak, rss_limit, f"RSS reached {peak / MiB:.0f} MiB; "
                        f"stderr: {err[-500:]}")
        return code, out, err


def now_ms():
    return int(time.time() * 1000)


def gpu_per_index(start, count=1024):
    """One DCGM_FI_DEV_GPU_UTIL series per gpu label 0..count-1, one point
    each (117 KB of JSON for 1024)."""
    return [({"__name__": "DCGM_FI_DEV_GPU_UTIL", "Hostname": "n1", "gpu": str(g)},
             [(start, "50")]) for g in range(count)]


class GpuIndexAmplification(HostileCase):
    def test_a_gpu_per_label_value_is_refused_in_bounded_memory(self):
        def query_range(query, start, end, step):
            if query.startswith("DCGM_FI_DEV_GPU_UTIL"):
                return 200, "application/json", matrix(gpu_per_index(start))
            return None
        server = self.serve(query_range=query_range)
        code, _, err = self.gd(server, "report", "--read", "query-range", "--since", "6h")
        self.assertEqual(code, 1, err)
        self.assertIn("n1: a series of DCGM_FI_DEV_GPU_UTIL names GPU 64 of the node; "
                      "a node has at most 64 GPUs", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)

    def test_by_remote_read_too(self):
        def read(body):
            series = [timeseries([("__name__", "DCGM_FI_DEV_GPU_UTIL"), ("Hostname", "n1"),
                                  ("gpu", str(g))], [(now_ms() - 60_000, 50.0)])
                      for g in range(1024)]
            return 200, "application/x-protobuf", snappy_literal(read_response(series))
        server = self.serve(read=read)
        code, _, err = self.gd(server, "report", "--read", "remote-read", "--since", "6h")
        self.assertEqual(code, 1, err)
        self.assertIn("a node has at most 64 GPUs", err)

    def test_a_node_of_eight_gpus_is_read(self):
        def query_range(query, start, end, step):
            if query.startswith("DCGM_FI_DEV_GPU_UTIL"):
                return 200, "application/json", matrix(gpu_per_index(start, 8))
            return None
        server = self.serve(query_range=query_range)
        code, out, err = self.gd(server, "report", "--read", "query-range", "--since", "1h",
                                 "--json")
        self.assertEqual(code, 0, err)


class RemoteReadBombs(HostileCase):
    def test_a_samples_reply_of_empty_series_is_refused_before_it_is_built(self):
        # 3 MiB of snappy that unpacks to 64 MiB: a ReadResponse of 33
        # million empty series (2.9 GB when parsed whole).
        n = (64 * MiB - 6) // 2
        inner = b"\x0a\x00"
        prefix = b"\x0a" + varint(len(inner) * n)
        bomb = snappy_repeat(prefix, inner, len(prefix) + len(inner) * n)
        self.assertLess(len(bomb), 4 * MiB)
        server = self.serve(read=lambda body: (200, "application/x-protobuf", bomb))
        code, _, err = self.gd(server, "report", "--read", "remote-read")
        self.assertEqual(code, 1, err)
        self.assertIn("more than 65536 series messages (empty ones too)", err)

    def test_frames_of_empty_series_are_refused(self):
        # One 8 MiB frame of four million empty series (0.36 GB parsed whole).
        message = b"\x0a\x00" * (4 << 20)
        body = frame(message)
        server = self.serve(read=lambda b: (200, STREAMED, body))
        code, _, err = self.gd(server, "report", "--read", "remote-read")
        self.assertEqual(code, 1, err)
        self.assertIn("more than 65536 series messages (empty ones too)", err)


class RemoteReadPoints(HostileCase):
    def test_the_points_bound_holds_while_cursors_fill(self):
        # 4096 series of a sample every 15 s for 47 hours (a window holds at
        # most two days), 2 bits a sample: 12 MB of frames that fill 46
        # million grid points (0.74 GB) unless the 8,000,000-point bound is
        # checked as they fill.
        steps = 47 * 3600 // 15
        start = now_ms() - 47 * 3600 * 1000 + 1000
        chunk = xor_chunk(start, 15000, steps, 1.0)
        body = b"".join(
            frame(b"".join(
                field_series(i, chunk) for i in range(at, at + 64)))
            for at in range(0, 4096, 64))
        server = self.serve(read=lambda b: (200, STREAMED, body))
        code, _, err = self.gd(server, "report", "--read", "remote-read", "--since", "47h",
                               rss_limit=POINTS_RSS_LIMIT)
        self.assertEqual(code, 1, err)
        self.assertIn("more than 8000000 points", err)


def field_series(i, chunk):
    from fake_prometheus import field
    return field(1, chunked_series([("__name__", "DCGM_FI_DEV_GPU_UTIL"),
                                    ("Hostname", "n1"), ("x", str(i))], [chunk]))


# 8,000,000 points of 16 bytes held when the bound is reached.
POINTS_RSS_LIMIT = 300 * MiB * RSS_LIMIT_FACTOR + RSS_SANITIZER_QUARANTINE


def gpu0(metric):
    return {"__name__": metric, "Hostname": "n1", "gpu": "0", "UUID": "GPU-0"}


def series_of(values_by_metric):
    """query_range answering each metric with one GPU 0 series whose k-th
    grid time has values[k]."""
    def query_range(query, start, end, step):
        for metric, values in values_by_metric.items():
            if query.startswith(metric + "{"):
                return 200, "application/json", matrix(
                    [(gpu0(metric), [(start + k * step, str(v)) for k, v in enumerate(values)])])
        return None
    return query_range


class ProcessLists(HostileCase):
    PROCS = 4096

    def test_thousands_of_processes_on_one_gpu(self):
        cache = {}

        def query_range(query, start, end, step):
            steps = int((end - start) // step) + 1
            times = [start + k * step for k in range(steps)]
            metric = query.split("{")[0]
            key = (metric, start, end)
            if key in cache:
                return cache[key]
            if metric == "DCGM_FI_DEV_GPU_UTIL":
                got = matrix([(gpu0(metric), [(t, "90") for t in times])])
            elif metric == "gpudoctor_gpu_processes":
                got = matrix([(gpu0(metric), [(t, str(self.PROCS)) for t in times])])
            elif metric in ("gpudoctor_process_gpu_memory_bytes",
                            "gpudoctor_process_sm_utilization_percent",
                            "gpudoctor_process_memory_utilization_percent"):
                values = [[t, "1000000"] for t in times]
                got = json.dumps({"status": "success", "data": {
                    "resultType": "matrix", "result": [
                        {"metric": dict(gpu0(metric), pid=str(1000 + p)), "values": values}
                        for p in range(self.PROCS)]}}).encode()
            elif metric == "gpudoctor_process_tree_cpu_percent":
                values = [[t, "50"] for t in times]
                got = json.dumps({"status": "success", "data": {
                    "resultType": "matrix", "result": [
                        {"metric": {"__name__": metric, "Hostname": "n1", "pid": str(1000 + p),
                                    "ppid": "1", "comm": f"w{p}", "user": "u"},
                         "values": values} for p in range(self.PROCS)]}}).encode()
            else:
                return None
            cache[key] = (200, "application/json", got)
            return cache[key]

        server = self.serve(query_range=query_range)
        code, out, err = self.gd(server, "report", "--read", "query-range", "--since", "2h",
                                 "--json", timeout=PROCESS_LISTS_TIMEOUT_S,
                                 rss_limit=PROCESS_LISTS_RSS_LIMIT)
        self.assertEqual(code, 0, err)
        doc = json.loads(out)
        self.assertEqual(doc["fleet"]["checked"], 1)


# Generous: the lists built in linear time take a few seconds; searched
# linearly, two hours of 4096 processes took minutes. Under the sanitizers
# every step is several times slower, so the bound grows with them (the
# ctest timeout of this class too, tests/e2e/CMakeLists.txt).
PROCESS_LISTS_TIMEOUT_S = 120 * (4 if os.environ.get("GD_SANITIZED") else 1)
# Three replies of ~50 MB of JSON each (4096 series of 481 points) parsed.
PROCESS_LISTS_RSS_LIMIT = 1024 * MiB * RSS_LIMIT_FACTOR + RSS_SANITIZER_QUARANTINE


class EscapeBytes(HostileCase):
    EVIL = "\x1b]0;owned\x07\x1b[2J\u202e"

    def assert_clean(self, text):
        for bad in ("\x1b", "\x07", "\u202e"):
            self.assertNotIn(bad, text)

    def each_command(self, server):
        trace = os.path.join(self.tmp.name, "n1.jsonl")
        for cmd in (["report", "--read", "remote-read", "--since", "1h"],
                    ["diagnose", "--read", "remote-read", "--since", "1h"],
                    ["export", "--node", "n1", "--read", "remote-read", "--since", "1h",
                     "-o", trace]):
            code, out, err = self.gd(server, *cmd)
            self.assertNotEqual(code, 0, err)
            yield cmd[0], out + err

    def test_the_body_of_a_failed_remote_read(self):
        server = self.serve(read=lambda b: (500, "text/plain", self.EVIL.encode()))
        for cmd, text in self.each_command(server):
            self.assert_clean(text)
            self.assertIn("HTTP 500: \\e]0;owned\\x07\\e[2J\\u202e", text, cmd)

    def test_the_content_type_of_a_200_reply(self):
        server = self.serve(read=lambda b: (200, "text/html" + self.EVIL, b"x"))
        for cmd, text in self.each_command(server):
            self.assert_clean(text)
            self.assertIn("Content-Type: text/html\\e]0;owned", text, cmd)


class TokenFile(HostileCase):
    def token(self, data):
        path = os.path.join(self.tmp.name, "token")
        with open(path, "wb") as f:
            f.write(data)
        return path

    def test_a_bare_cr_is_refused_before_any_request(self):
        server = self.serve()
        code, _, err = self.gd(server, "report", "--since", "1h", "--bearer-token-file",
                               self.token(b"abc\rX-Injected: 1\n"))
        self.assertEqual(code, 2, err)
        self.assertIn("the first line holds a control byte (\\r at byte 4)", err)
        self.assertEqual(server.requests, 0)

    def test_dev_zero_is_refused_in_bounded_memory(self):
        server = self.serve()
        code, _, err = self.gd(server, "report", "--since", "1h", "--bearer-token-file",
                               "/dev/zero", rss_limit=100 * MiB * RSS_LIMIT_FACTOR +
                               RSS_SANITIZER_QUARANTINE)
        self.assertEqual(code, 2, err)
        self.assertIn("/dev/zero: the first line is longer than 4096 bytes", err)
        self.assertEqual(server.requests, 0)

    def test_a_crlf_line_is_the_token(self):
        server = self.serve()
        self.gd(server, "report", "--since", "1h", "--bearer-token-file",
                self.token(b"abc\r\nsecond line\n"))
        self.assertGreater(server.requests, 0)
        self.assertEqual(server.headers_seen[0].get("Authorization"), "Bearer abc")


class XidCodes(HostileCase):
    def test_what_export_writes_diagnose_reads(self):
        server = self.serve(query_range=series_of({
            "DCGM_FI_DEV_GPU_UTIL": [50] * 6,
            # 0.5 and 70000 are no Xid codes (1 to 65535); 79 is.
            "DCGM_FI_DEV_XID_ERRORS": [0, 0.5, 70000, 79, 79, 0]}))
        trace = os.path.join(self.tmp.name, "n1.jsonl")
        code, _, err = self.gd(server, "export", "--node", "n1", "--read", "query-range",
                               "--since", "1h", "-o", trace)
        self.assertEqual(code, 0, err)
        with open(trace) as f:
            _, samples = read_trace(f.read())
        codes = [e["code"] for s in samples for e in s.get("events", [])]
        self.assertEqual(codes, [79])
        p = subprocess.run([GPUDOCTOR, "diagnose", "--from", trace, "--json"],
                           capture_output=True, text=True, timeout=60)
        self.assertNotEqual(p.returncode, 3, p.stderr)
        self.assertIn("xid", p.stdout)


class PowerLimit(HostileCase):
    def test_an_absurd_limit_does_not_lift_the_energy_bound(self):
        # One counter jump of 9e18 mJ in 15 s: 2.5e9 kWh if a 1e308 W limit
        # were believed.
        server = self.serve(query_range=series_of({
            "DCGM_FI_DEV_GPU_UTIL": [50] * 4,
            "DCGM_FI_DEV_POWER_MGMT_LIMIT": ["1e308"] * 4,
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": [1e9, 1e9, 9e18, 9e18]}))
        code, out, err = self.gd(server, "report", "--read", "query-range", "--since", "1h",
                                 "--json")
        self.assertEqual(code, 0, err)
        self.assertLess(json.loads(out)["node"]["energy_kwh"], 1)
        trace = os.path.join(self.tmp.name, "n1.jsonl")
        code, _, err = self.gd(server, "export", "--node", "n1", "--read", "query-range",
                               "--since", "1h", "-o", trace)
        self.assertEqual(code, 0, err)
        with open(trace) as f:
            header, _ = read_trace(f.read())
        self.assertIsNone(header["gpus"][0].get("power_limit_w"))

    def test_a_trace_header_with_an_absurd_limit_is_one_line(self):
        header = {"format": "gpudoctor-trace", "version": 1, "host": {"hostname": "h"},
                  "gpus": [{"index": 0, "power_limit_w": 1e308}]}
        samples = [{"t": 1000 + 15 * k, "gpus": [{"index": 0, "util_pct": 50,
                                                   "energy_mj_total": e}]}
                   for k, e in enumerate([1e9, 9e18])]
        trace = os.path.join(self.tmp.name, "t.jsonl")
        with open(trace, "w") as f:
            for line in [header] + samples:
                f.write(json.dumps(line) + "\n")
        p = subprocess.run([GPUDOCTOR, "report", "--from", trace, "--json"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("power_limit_w: 1e+308 is not a power limit (0 to 10000 W)", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)


class Deadlines(HostileCase):
    def test_nodes_that_run_out_are_reported_not_checked(self):
        # Every answer takes 0.5 s: a node's ~12 requests take ~6 s.
        server = self.serve(nodes=("n1", "n2", "n3"), delay_s=0.5)
        code, out, err = self.gd(server, "diagnose", "--read", "query-range", "--since", "1h",
                                 "--concurrency", "1", "--node-timeout", "2s",
                                 "--timeout", "3s", timeout=60)
        self.assertEqual(code, 3, err)
        text = out + err
        self.assertIn("n1", text)
        self.assertIn("ran out of its deadline (--node-timeout 2 s) before it was read", text)
        self.assertIn("ran out of the fleet's deadline (--timeout 3 s) before it was read",
                      text)
        self.assertIn("not read: the fleet's deadline (--timeout 3 s) ran out first", text)

    def test_report_too(self):
        server = self.serve(nodes=("n1", "n2"), delay_s=0.5)
        code, _, err = self.gd(server, "report", "--read", "query-range", "--since", "1h",
                               "--node-timeout", "2s", timeout=60)
        self.assertEqual(code, 1, err)
        self.assertIn("ran out of its deadline (--node-timeout 2 s)", err)

    def test_a_node_timeout_past_the_timeout_is_a_usage_error(self):
        server = self.serve()
        code, _, err = self.gd(server, "report", "--node-timeout", "2h", "--timeout", "1h")
        self.assertEqual(code, 2, err)


class Batching(HostileCase):
    """A node read by query_range costs a few batched queries, not one per
    entry of the series table (78: ~38 minutes a node when each answer
    came just inside its deadline)."""

    def test_a_node_is_a_few_queries(self):
        server = self.serve(query_range=series_of({
            "DCGM_FI_DEV_GPU_UTIL": [50] * 6, "DCGM_FI_DEV_GPU_TEMP": [61] * 6}))
        code, out, err = self.gd(server, "export", "--node", "n1", "--read", "query-range",
                                 "--since", "1h", "-o", "-")
        self.assertEqual(code, 0, err)
        self.assertLessEqual(len(server.queries), 16, server.queries)
        asked = " ".join(server.queries)
        for metric in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_TEMP", "node_load1",
                       "gpudoctor_process_tree_cpu_percent", "node_memory_MemTotal_bytes"):
            self.assertIn(metric, asked)
        _, samples = read_trace(out)
        gpus = [g for s in samples for g in s.get("gpus", [])]
        self.assertTrue(gpus, out[:500])
        self.assertEqual({(g.get("util_pct"), g.get("temp_c")) for g in gpus}, {(50, 61)})

    def test_a_server_that_refuses_batches_is_asked_entry_by_entry(self):
        server = self.serve(refuse_batches=True, query_range=series_of({
            "DCGM_FI_DEV_GPU_UTIL": [50] * 6, "DCGM_FI_DEV_GPU_TEMP": [61] * 6}))
        code, out, err = self.gd(server, "export", "--node", "n1", "--read", "query-range",
                                 "--since", "1h", "-o", "-")
        self.assertEqual(code, 0, err)
        _, samples = read_trace(out)
        gpus = [g for s in samples for g in s.get("gpus", [])]
        self.assertEqual({(g.get("util_pct"), g.get("temp_c")) for g in gpus}, {(50, 61)})


if __name__ == "__main__":
    unittest.main()
