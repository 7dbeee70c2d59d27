"""A Prometheus the test scripts, for the fleet commands' hostile-server
tests (test_hostile_prometheus.py): the series API lists the nodes, and
query_range and remote read answer whatever the test's functions return,
however hostile. Remote read's wire formats are written here by hand
(protobuf, snappy, the streamed frames with their CRC-32C), so a reply can
be anything the formats allow, bombs included.
"""
import http.server
import json
import os
import re
import struct
import threading
import time
import urllib.parse

MiB = 1 << 20


# ---- protobuf ---------------------------------------------------------------

def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(number, payload):
    """A length-delimited field (a message, bytes or a string)."""
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def label(name, value):
    return field(1, name) + field(2, value)


def sample(t_ms, v):
    """remote.Sample: value (double, field 1), timestamp (int64, field 2)."""
    return b"\x09" + struct.pack("<d", v) + varint(2 << 3) + varint(t_ms)


def timeseries(labels, samples):
    """remote.TimeSeries from [(name, value)] and [(t_ms, v)]."""
    return (b"".join(field(1, label(n, v)) for n, v in labels) +
            b"".join(field(2, sample(t, v)) for t, v in samples))


def read_response(series):
    """remote.ReadResponse of one QueryResult holding `series` (encoded
    TimeSeries)."""
    return field(1, b"".join(field(1, s) for s in series))


# ---- snappy (the raw format remote read uses) --------------------------------

def snappy_literal(data):
    """`data` as snappy: every byte a literal (valid, not compressed)."""
    out = bytearray(varint(len(data)))
    for at in range(0, len(data), 65536):
        piece = data[at:at + 65536]
        out += bytes([61 << 2]) + struct.pack("<H", len(piece) - 1) + piece
    return bytes(out)


def snappy_repeat(prefix, pattern, total):
    """Snappy of `prefix` then `pattern` repeated up to `total` bytes in
    all: a literal, then copies of 64 bytes at the pattern's offset, three
    bytes each (a bomb: ~21x)."""
    assert (total - len(prefix)) % len(pattern) == 0
    out = bytearray(varint(total))
    head = prefix + pattern
    out += bytes([(len(head) - 1) << 2]) if len(head) <= 60 else \
        bytes([61 << 2]) + struct.pack("<H", len(head) - 1)
    out += head
    left = total - len(head)
    step = 64 - 64 % len(pattern)
    copy = bytes([(step - 1) << 2 | 2]) + struct.pack("<H", len(pattern))
    out += copy * (left // step)
    rest = left % step
    if rest:
        out += bytes([(rest - 1) << 2 | 2]) + struct.pack("<H", len(pattern))
    return bytes(out)


# ---- streamed frames --------------------------------------------------------

def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    t = _CRC_TABLE
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def xor_chunk(t0_ms, delta_ms, n, v):
    """An XOR chunk of `n` samples of value `v`, `delta_ms` apart from
    `t0_ms`: after the first two, two zero bits a sample (delta-of-delta 0,
    value unchanged)."""
    def uvarint(x):
        return varint(x)
    head = struct.pack(">H", n) + uvarint(t0_ms << 1) + struct.pack(">d", v)
    if n == 1:
        return head
    bits = 1 + 2 * (n - 2)
    return head + uvarint(delta_ms) + bytes((bits + 7) // 8)


def chunked_series(labels, chunks):
    """remote.ChunkedSeries: labels, then XOR chunks (type 1)."""
    return (b"".join(field(1, label(n, v)) for n, v in labels) +
            b"".join(field(2, varint(3 << 3) + varint(1) + field(4, c)) for c in chunks))


def frame(message):
    return varint(len(message)) + struct.pack(">I", crc32c(message)) + message


STREAMED = "application/x-streamed-protobuf; proto=prometheus.ChunkedReadResponse"


# ---- the server -------------------------------------------------------------

def matrix(series):
    """A query_range reply: [(labels dict, [(t, value text)])]."""
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": m, "values": [[t, v] for t, v in pts]} for m, pts in series]}}).encode()


EMPTY_MATRIX = matrix([])


# A batched range query (src/promsource/query_batches.h): entries' queries
# joined by " or ", each as label_replace(QUERY, "gd_entry", "N", "", "").
BATCHED = re.compile(r'label_replace\((.*?), "gd_entry", "(\d+)", "", ""\)(?: or |$)')


def unbatched(query_range):
    """query_range(query, ...) answering a batched query as PromQL would:
    each entry's query answered alone, its series tagged with gd_entry; the
    first reply that is not a 200 is the batch's."""
    def answer(query, start, end, step):
        parts = BATCHED.findall(query) if query.startswith("label_replace(") else []
        if not parts:
            return query_range(query, start, end, step)
        result = []
        for inner, tag in parts:
            got = query_range(inner, start, end, step)
            if got is None:
                continue
            status, _, body = got
            if status != 200:
                return got
            try:
                series = json.loads(body)["data"]["result"]
            except (ValueError, KeyError, TypeError):
                return got  # a hostile body: the batch's answer as it is
            for one in series:
                one["metric"]["gd_entry"] = tag
            result += series
        return 200, "application/json", json.dumps(
            {"status": "success", "data": {"resultType": "matrix", "result": result}}).encode()
    return answer


class FakePrometheus:
    """Answers on 127.0.0.1: the series API with `nodes` (one GPU series
    each, Hostname = the node), query_range with query_range(query, start,
    end, step) -> (status, type, body) or None (an empty matrix), remote
    read with read(body) -> (status, type, body) or None (HTTP 400, as a
    server without it answers). `delay_s` holds every reply that long."""

    def __init__(self, nodes=("n1",), query_range=None, read=None, delay_s=0,
                 refuse_batches=False):
        self.nodes = list(nodes)
        self.query_range = query_range and unbatched(query_range)
        self.queries = []  # every query_range's expression, in order
        # Refuse a batched query as VictoriaMetrics refuses one past its
        # -search.maxQueryLen.
        self.refuse_batches = refuse_batches
        self.read = read
        self.delay_s = delay_s
        self.requests = 0
        self.headers_seen = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                server.count(self)
                url = urllib.parse.urlsplit(self.path)
                q = urllib.parse.parse_qs(url.query)
                if url.path == "/api/v1/series":
                    match = q.get("match[]", [""])[0]
                    data = [] if "DCGM_FI_DEV_GPU_UTIL" not in match else [
                        {"__name__": "DCGM_FI_DEV_GPU_UTIL", "Hostname": n, "gpu": "0"}
                        for n in server.nodes]
                    self.answer(200, "application/json",
                                json.dumps({"status": "success", "data": data}).encode(),
                                delay=False)
                elif url.path == "/api/v1/query_range":
                    server.queries.append(q["query"][0])
                    if server.refuse_batches and q["query"][0].startswith("label_replace("):
                        self.answer(422, "application/json", json.dumps({
                            "status": "error", "errorType": "bad_data",
                            "error": "too long query; length exceeds -search.maxQueryLen"
                        }).encode())
                        return
                    got = server.query_range and server.query_range(
                        q["query"][0], float(q["start"][0]), float(q["end"][0]),
                        float(q["step"][0]))
                    self.answer(*(got or (200, "application/json", EMPTY_MATRIX)))
                else:
                    self.answer(404, "text/plain", b"not found")

            def do_POST(self):
                server.count(self)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                got = server.read and server.read(body)
                self.answer(*(got or (400, "text/plain", b"remote read is off")))

            def answer(self, code, content_type, body, delay=True):
                if server.delay_s and delay:
                    time.sleep(server.delay_s)
                try:
                    self.send_response(code)
                    # Bytes as they are (UTF-8, escapes): a hostile header.
                    self.send_header("Content-Type",
                                     content_type.encode().decode("latin-1"))
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the client gave up

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def count(self, handler):
        self.requests += 1
        self.headers_seen.append(dict(handler.headers.items()))

    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def run_watched(cmd, directory, rss_limit, timeout=150, env=None):
    """Runs `cmd` with stdout and stderr in files under `directory`, killing
    it when its RSS passes `rss_limit` (so a bomb cannot take the machine
    down): (exit status, stdout, stderr, peak RSS in bytes from the
    kernel's own account)."""
    out_path = os.path.join(directory, "out")
    err_path = os.path.join(directory, "err")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        import subprocess
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
    deadline = time.time() + timeout
    status = rusage = None
    while True:
        pid, status, rusage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        try:
            with open(f"/proc/{p.pid}/status") as f:
                rss = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmRSS:"))
        except (OSError, StopIteration):
            rss = 0
        if rss > rss_limit or time.time() > deadline:
            p.kill()
            _, status, rusage = os.wait4(p.pid, 0)
            break
        time.sleep(0.01)
    p.returncode = os.waitstatus_to_exitcode(status)
    with open(out_path) as f:
        stdout = f.read()
    with open(err_path) as f:
        stderr = f.read()
    return p.returncode, stdout, stderr, rusage.ru_maxrss * 1024
