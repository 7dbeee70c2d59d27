#!/usr/bin/env python3
"""What `gpudoctor top` costs while it runs, beside nvtop on the same fake
scenario: 8 fake GPUs (tests/fake_nvml) each listing one GPU job, and 8 jobs
of 61 workers (~500 processes), refreshed once a second in a 200x60 pseudo
terminal. Prints CPU (% of one core over a measured window), RSS, and the
time from process start to the first full frame.

    top_cost.py GPUDOCTOR FAKE_NVML SCENARIO_4GPU [--nvtop PATH] [--seconds 60]
"""
import argparse
import fcntl
import json
import os
import pty
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time

JOBS, WORKERS = 8, 61
CLK_TCK = os.sysconf("SC_CLK_TCK")


def spawn_jobs():
    """8 shells each with 61 sleeping children: the GPU jobs."""
    jobs = []
    for _ in range(JOBS):
        p = subprocess.Popen(["sh", "-c", f"for i in $(seq {WORKERS}); do sleep 100000 & done; wait"],
                             start_new_session=True)
        jobs.append(p)
    time.sleep(1.0)
    return jobs


def end_jobs(jobs):
    """Kills what spawn_jobs started, workers included."""
    for j in jobs:
        try:
            os.killpg(j.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        j.wait()


def eight_gpu_scenario(base, pids, directory):
    with open(base) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    header, sample = lines[0], lines[1]
    gpus, samples = [], []
    for i in range(8):
        g = dict(header["gpus"][i % len(header["gpus"])])
        g["index"] = i
        g["uuid"] = f"GPU-bench-{i:04d}"
        g["pci_bus_id"] = f"00000000:{0x10 + i:02X}:00.0"
        gpus.append(g)
        s = dict(sample["gpus"][i % len(sample["gpus"])])
        s["index"] = i
        s["processes"] = [{"pid": pids[i], "used_bytes": 60 << 30, "type": "compute"}]
        s["mem_used_bytes"] = (60 << 30) + (300 << 20)
        samples.append(s)
    header["gpus"] = gpus
    sample["gpus"] = samples
    path = os.path.join(directory, "bench_8gpu.jsonl")
    with open(path, "w") as f:
        f.write(json.dumps(header) + "\n" + json.dumps(sample) + "\n")
    return path


def in_pty(argv, env, cols=200, rows=60):
    """Starts argv on a new pseudo terminal of the given size; its output is
    read (and thrown away) on a thread, as a terminal would."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                         start_new_session=True, preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
    os.close(slave)

    def drain():
        while True:
            try:
                if not os.read(master, 65536):
                    break
            except OSError:
                break
    threading.Thread(target=drain, daemon=True).start()
    return p, master


def cpu_seconds(pid):
    """The process's CPU time (all threads): its kernel CPU clock, in
    nanoseconds (the clock id clock_getcpuclockid(3) makes: ~pid << 3 | 2);
    stat's 10-ms ticks where that fails. Over a 40-s run the ticks are
    0.25 ms/s steps, as large as the differences measured."""
    try:
        return time.clock_gettime((~pid << 3) | 2)
    except OSError:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def measure(name, argv, env, seconds, warmup=5):
    p, master = in_pty(argv, env)
    try:
        time.sleep(warmup)
        if p.poll() is not None:
            print(f"{name}: exited early ({p.returncode})")
            return None
        c0, t0 = cpu_seconds(p.pid), time.monotonic()
        time.sleep(seconds)
        c1, t1 = cpu_seconds(p.pid), time.monotonic()
        rss = status_kib(p.pid, "VmRSS") / 1024
        hwm = status_kib(p.pid, "VmHWM") / 1024
        pct = 100 * (c1 - c0) / (t1 - t0)
        print(f"{name}: CPU {pct:.2f}% of one core over {t1 - t0:.0f} s "
              f"({1000 * (c1 - c0) / (t1 - t0):.1f} ms/s); RSS {rss:.1f} MiB (peak {hwm:.1f} MiB)")
        return pct, rss
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        os.close(master)


def first_frame(gpudoctor, fake, env, runs=20):
    """Process start to the first full frame drawn (top quits right after
    it: --exit-after-frames 1), in a pty."""
    times = []
    for _ in range(runs):
        t0 = time.monotonic()
        p, master = in_pty([gpudoctor, "--nvml-lib", fake, "--kmsg", "none", "top",
                            "--exit-after-frames", "1"], env)
        # A blocking wait: Popen.wait(timeout) polls, sleeping up to 50 ms
        # between looks, which rounded half the runs up by ~50 ms. A timer
        # ends a run that hangs.
        timer = threading.Timer(30, lambda: os.killpg(p.pid, signal.SIGKILL))
        timer.start()
        p.wait()
        times.append(1000 * (time.monotonic() - t0))
        timer.cancel()
        os.close(master)
    times.sort()
    print(f"top: first full frame after {statistics.median(times):.1f} ms median, "
          f"p90 {times[int(0.9 * (len(times) - 1))]:.1f} ms ({runs} runs; process start "
          f"to the frame drawn, then exit)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpudoctor")
    ap.add_argument("fake_nvml")
    ap.add_argument("scenario")
    ap.add_argument("--nvtop", default="")
    ap.add_argument("--seconds", type=int, default=60)
    a = ap.parse_args()
    jobs = spawn_jobs()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = eight_gpu_scenario(a.scenario, [j.pid for j in jobs], tmp)
            env = dict(os.environ, FAKE_NVML_SCENARIO=path, TERM="xterm-256color",
                       LANG="C.UTF-8")
            n = int(subprocess.run(["sh", "-c", "ls -d /proc/[0-9]* | wc -l"],
                                   capture_output=True, text=True).stdout)
            print(f"8 fake GPUs, {JOBS} jobs x {WORKERS} workers; {n} processes on the machine; "
                  f"1 Hz, 200x60")
            ours = measure("gpudoctor top", [a.gpudoctor, "--nvml-lib", a.fake_nvml, "--kmsg",
                                             "none", "top"], env, a.seconds)
            if a.nvtop:
                nv_env = dict(env, LD_LIBRARY_PATH=os.path.dirname(a.fake_nvml))
                anchor = measure("nvtop", [a.nvtop, "-d", "10"], nv_env, a.seconds)
                if ours and anchor and anchor[0] > 0:
                    # Issue 44's goal: at most 2x nvtop's CPU, RSS at most 12 MiB.
                    print(f"top beside nvtop: CPU {ours[0] / anchor[0]:.1f}x nvtop's "
                          f"(goal: at most 2x), RSS {ours[1]:.1f} MiB vs {anchor[1]:.1f} MiB "
                          f"(goal: at most 12 MiB)")
            first_frame(a.gpudoctor, a.fake_nvml, env)
    finally:
        end_jobs(jobs)


if __name__ == "__main__":
    main()
