#!/usr/bin/env python3
"""Benchmark: `gpudoctor diagnose --prometheus` over a fleet.

Writes NODES nodes x GPUS GPUs x HOURS hours at a 15 s scrape as OpenMetrics
(dcgm-exporter's default counters, node_exporter's CPU and memory; one node
in ten thermally throttled), backfills a Prometheus with promtool, starts it
on a free loopback port, and times `gpudoctor diagnose --prometheus --json`
over the whole window. Prints: generation and backfill time, then for the
diagnose run its wall time, peak RSS (getrusage of the child via wait4),
time per node, its own CPU time (decoding and the rules) and the CPU time
the Prometheus server spent answering (from /proc/PID/stat), and the share
of the wall time not spent on gpudoctor's CPU (waiting on the server).

usage: fleet_diagnose.py GPUDOCTOR [--nodes 100] [--gpus 8] [--hours 24]
                         [--concurrency 4] [--batch 10]
                         [--reads remote-read,query-range] [--victoria]
                         [--dir DIR] [--keep] [--reuse]

--victoria also imports the fleet into VictoriaMetrics and times a run
there. Each --reads path is one timed run against the same server, side by side.
--keep --dir DIR leaves the TSDB there; --reuse --dir DIR times again
against it without writing the fleet anew.
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

STEP = 15
CLK_TCK = os.sysconf("SC_CLK_TCK")

# dcgm-exporter's etc/default-counters.csv (the series it exports unless
# told otherwise): name, OpenMetrics type, value of a busy GPU (cool, hot).
DCGM = [
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", 1980, 1200),
    ("DCGM_FI_DEV_MEM_CLOCK", "gauge", 2619, 2619),
    ("DCGM_FI_DEV_MEMORY_TEMP", "gauge", 55, 84),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", 58, 89),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", 610.25, 420.5),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "unknown", None, None),
    ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "unknown", 0, 0),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", 98, 98),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", 45, 45),
    ("DCGM_FI_DEV_ENC_UTIL", "gauge", 0, 0),
    ("DCGM_FI_DEV_DEC_UTIL", "gauge", 0, 0),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", 0, 0),
    ("DCGM_FI_DEV_FB_FREE", "gauge", 41000, 41000),
    ("DCGM_FI_DEV_FB_USED", "gauge", 40000, 40000),
    ("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "unknown", 0, 0),
    ("DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", 0, 0),
    ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "unknown", 0, 0),
    ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "unknown", 0, 0),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", 0, 0),
    ("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge", 0, 0x20),
]
CPUS = 8
CPU_MODES = {"user": 4.0, "nice": 0.0, "system": 1.0, "idle": 9.7, "iowait": 0.1,
             "irq": 0.1, "softirq": 0.1, "steal": 0.0}


def write_openmetrics(path, nodes, gpus, times, victoria=False):
    """Streams the series of the nodes in range `nodes` to `path` (as
    OpenMetrics, or as VictoriaMetrics' import text); returns the number of
    series."""
    n_series = 0
    # VictoriaMetrics' Prometheus-text import: times in milliseconds, and
    # no comment lines (`# TYPE` is written only for OpenMetrics).
    ms = "000" if victoria else ""
    with open(path, "w", buffering=1 << 20) as f:
        def comment(line):
            if not victoria:
                f.write(line)
        for name, typ, cool, hot in DCGM:
            comment(f"# TYPE {name} {typ}\n")
            for n in nodes:
                node = f"gpu-{n:03d}"
                for g in range(gpus):
                    is_hot = n % 10 == 0 and g == 0
                    labels = (f'gpu="{g}",UUID="GPU-{node}-{g}",device="nvidia{g}",'
                              f'modelName="NVIDIA H100 80GB HBM3",Hostname="{node}",'
                              f'instance="10.{n // 250}.{n % 250}.1:9400",'
                              f'job="dcgm-exporter"')
                    v = hot if is_hot else cool
                    n_series += 1
                    for i, t in enumerate(times):
                        value = 9e9 + i * STEP * 600000 if v is None else v
                        f.write(f"{name}{{{labels}}} {value} {t}{ms}\n")
        comment("# TYPE node_cpu_seconds counter\n")
        for n in nodes:
            for c in range(CPUS):
                for mode, per in CPU_MODES.items():
                    labels = f'instance="gpu-{n:03d}:9100",job="node",cpu="{c}",mode="{mode}"'
                    n_series += 1
                    for i, t in enumerate(times):
                        f.write(f"node_cpu_seconds_total{{{labels}}} {100000 + per * i} {t}{ms}\n")
        for name, value in (("node_memory_MemTotal_bytes", 512 << 30),
                            ("node_memory_MemAvailable_bytes", 400 << 30),
                            ("node_memory_SwapTotal_bytes", 0),
                            ("node_memory_SwapFree_bytes", 0),
                            ("node_load1", 4.5)):
            comment(f"# TYPE {name} gauge\n")
            for n in nodes:
                labels = f'instance="gpu-{n:03d}:9100",job="node"'
                n_series += 1
                for t in times:
                    f.write(f"{name}{{{labels}}} {value} {t}{ms}\n")
        comment("# EOF\n")
    return n_series


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


def settle(pid, deadline_s=1800):
    """Waits until the server is idle (a TSDB of overlapping backfilled
    blocks is compacted after start-up): under 2% of a core for 10 s."""
    t0 = time.monotonic()
    quiet = 0
    last = cpu_seconds(pid)
    while quiet < 5 and time.monotonic() - t0 < deadline_s:
        time.sleep(2)
        now = cpu_seconds(pid)
        quiet = quiet + 1 if now - last < 0.04 else 0
        last = now
    return time.monotonic() - t0


def backfill(a, d, start, end):
    """Writes and backfills the fleet in batches of nodes (the whole fleet
    as text at once is ~21 GB at full size); returns the TSDB's path."""
    tsdb = os.path.join(d, "tsdb")
    times = list(range(start, end + 1, STEP))
    om = os.path.join(d, "fleet.om")
    gen_s = fill_s = 0.0
    n_series = 0
    size_mb = 0.0
    for first in range(0, a.nodes, a.batch):
        t0 = time.monotonic()
        n_series += write_openmetrics(om, range(first, min(a.nodes, first + a.batch)),
                                      a.gpus, times)
        size_mb += os.path.getsize(om) / 1e6
        gen_s += time.monotonic() - t0
        t0 = time.monotonic()
        p = subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics",
                            "--max-block-duration=24h", om, tsdb],
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"promtool: {p.stderr[-2000:]}")
        fill_s += time.monotonic() - t0
        os.remove(om)
    print(f"fleet: {a.nodes} nodes x {a.gpus} GPUs x {a.hours:g} h at {STEP} s: "
          f"{n_series} series x {len(times)} points = {n_series * len(times) / 1e6:.1f} M "
          f"samples, {size_mb:.0f} MB of OpenMetrics written in {gen_s:.1f} s "
          f"(batches of {a.batch} nodes)")
    print(f"promtool backfill: {fill_s:.1f} s")
    with open(os.path.join(d, "window.json"), "w") as f:
        json.dump({"start": start, "end": end, "nodes": a.nodes, "gpus": a.gpus,
                   "hours": a.hours}, f)
    return tsdb


def import_victoria(a, d, start, end, vm_url):
    """The same fleet imported into VictoriaMetrics, batch by batch."""
    times = list(range(start, end + 1, STEP))
    path = os.path.join(d, "fleet.prom")
    t0 = time.monotonic()
    for first in range(0, a.nodes, a.batch):
        write_openmetrics(path, range(first, min(a.nodes, first + a.batch)), a.gpus,
                          times, victoria=True)
        size = os.path.getsize(path)
        with open(path, "rb") as body:
            req = urllib.request.Request(vm_url + "/api/v1/import/prometheus", data=body,
                                         method="POST",
                                         headers={"Content-Length": str(size)})
            with urllib.request.urlopen(req, timeout=3600) as r:
                if r.status not in (200, 204):
                    sys.exit(f"victoria-metrics import: HTTP {r.status}")
        os.remove(path)
    urllib.request.urlopen(vm_url + "/internal/force_flush", timeout=600).read()
    print(f"victoria-metrics import: {time.monotonic() - t0:.1f} s (text written and sent)")


def start_victoria(d):
    port = free_port()
    log = open(os.path.join(d, "vm.log"), "w")
    vm = subprocess.Popen(
        ["victoria-metrics", f"-storageDataPath={os.path.join(d, 'vm-data')}",
         f"-httpListenAddr=127.0.0.1:{port}", "-retentionPeriod=100y",
         "-loggerLevel=ERROR"], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while True:
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as r:
                if r.status == 200:
                    return vm, url, log
        except OSError:
            pass
        if time.time() > deadline or vm.poll() is not None:
            sys.exit("victoria-metrics did not start")
        time.sleep(0.5)


def diagnose(a, url, start, end, prom, read, server="Prometheus"):
    server_cpu0 = cpu_seconds(prom.pid)
    cmd = [a.gpudoctor, "diagnose", "--prometheus", url, "--since", str(start),
           "--until", str(end), "--step", f"{STEP}s", "--json",
           "--concurrency", str(a.concurrency), "--read", read]
    t0 = time.monotonic()
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - t0
    server_cpu = cpu_seconds(prom.pid) - server_cpu0
    code = os.waitstatus_to_exitcode(status)
    err = child.stderr.read().decode()
    if code not in (0, 1, 2):
        sys.exit(f"diagnose exited {code}: {err.strip()[-2000:]}")
    summary = json.loads(out)["summary"]
    cpu = usage.ru_utime + usage.ru_stime
    print(f"diagnose --prometheus ({server}) --read {read} --concurrency {a.concurrency}: exit {code}, "
          f"{summary['checked']} nodes checked, {len(summary['not_checked'])} not")
    print(f"  wall {wall:.1f} s, {wall / a.nodes * 1000:.0f} ms per node, "
          f"peak RSS {usage.ru_maxrss / 1024:.0f} MB")
    print(f"  gpudoctor CPU {cpu:.1f} s (decoding replies and the rules), "
          f"{server} CPU {server_cpu:.1f} s (answering); per node "
          f"{cpu / a.nodes * 1000:.0f} ms + {server_cpu / a.nodes * 1000:.0f} ms")
    waiting = max(0.0, 1 - cpu / (wall * min(a.concurrency, a.nodes)))
    print(f"  share of the workers' time not on gpudoctor's CPU (waiting on the "
          f"server, or for a CPU when the machine has fewer cores than workers): "
          f"{waiting * 100:.0f}%")
    print(f"  CPU split: gpudoctor {cpu / (cpu + server_cpu) * 100:.0f}%, {server} "
          f"{server_cpu / (cpu + server_cpu) * 100:.0f}%; both together used "
          f"{(cpu + server_cpu) / wall:.1f} of {os.cpu_count()} cores")
    print("  findings by id (nodes): " +
          ", ".join(f"{x['id']} {x['nodes']}" for x in summary["findings"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpudoctor")
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--hours", type=float, default=24)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--batch", type=int, default=10, help="nodes backfilled at once")
    ap.add_argument("--reads", default="remote-read,query-range",
                    help="diagnose's --read paths to time, one run each")
    ap.add_argument("--victoria", action="store_true",
                    help="also import the fleet into VictoriaMetrics and time it there "
                         "(query-range: it has no remote read)")
    ap.add_argument("--only-victoria", action="store_true",
                    help="with --victoria: no Prometheus at all")
    ap.add_argument("--dir")
    ap.add_argument("--reuse", action="store_true",
                    help="time against the TSDB an earlier --keep run left in --dir")
    ap.add_argument("--keep", action="store_true", help="keep the TSDB")
    a = ap.parse_args()
    for tool in ("prometheus", "promtool"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found (Debian package 'prometheus')")
    d = a.dir or tempfile.mkdtemp(prefix="gd-fleet-bench-")
    if a.reuse:
        with open(os.path.join(d, "window.json")) as f:
            w = json.load(f)
        start, end = w["start"], w["end"]
        a.nodes, a.gpus, a.hours = w["nodes"], w["gpus"], w["hours"]
        tsdb = os.path.join(d, "tsdb")
        print(f"fleet: {a.nodes} nodes x {a.gpus} GPUs x {a.hours:g} h, reused from {d}")
    else:
        end = (int(time.time()) - 300) // STEP * STEP
        start = end - int(a.hours * 3600) // STEP * STEP
        tsdb = None if a.only_victoria else backfill(a, d, start, end)
    if a.only_victoria:
        a.victoria = True
        a.reads = ""
    if tsdb is None:
        victoria(a, d, start, end)
        return
    port = free_port()
    cfg = os.path.join(d, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 1h\nscrape_configs: []\n")
    log = open(os.path.join(d, "prometheus.log"), "w")
    prom = subprocess.Popen(
        ["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={tsdb}",
         f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=3650d",
         "--log.level=warn"], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 300
        while True:
            try:
                with urllib.request.urlopen(url + "/-/ready", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.time() > deadline or prom.poll() is not None:
                sys.exit("prometheus did not start")
            time.sleep(0.5)
        print(f"prometheus settled (compaction done) after {settle(prom.pid):.0f} s")
        for read in filter(None, a.reads.split(",")):
            diagnose(a, url, start, end, prom, read)
    finally:
        prom.terminate()
        prom.wait()
        log.close()
    if a.victoria:
        victoria(a, d, start, end)


def victoria(a, d, start, end):
    fresh = not os.path.exists(os.path.join(d, "vm-data"))
    vm, vm_url, vm_log = start_victoria(d)
    try:
        if fresh:
            import_victoria(a, d, start, end, vm_url)
        print(f"victoria-metrics settled after {settle(vm.pid):.0f} s")
        diagnose(a, vm_url, start, end, vm, "query-range", server="VictoriaMetrics")
    finally:
        vm.terminate()
        vm.wait()
        vm_log.close()
        if not a.keep and not a.dir:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
