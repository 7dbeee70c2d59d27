#!/usr/bin/env python3
"""Every tracegen scenario through the real binaries.

gpudoctor-tracegen writes each scenario's trace (plain and .zst in turn, on
its minimum GPU count and on 4 GPUs); `gpudoctor diagnose --from TRACE
--json` reads it. Checks every must-fire and must-not-fire id of the
scenario table, the exit code against the worst severity (findings.md:
0 / 1 / 2), and the JSON shape of findings.md.

usage: scenario_cli_test.py TRACEGEN GPUDOCTOR
"""
import json
import os
import subprocess
import sys
import tempfile

KEYS = {"id", "severity", "gpus", "pids", "title", "evidence", "action", "start", "end"}
RANK = {"info": 0, "warning": 1, "critical": 2}


def main():
    tracegen, gpudoctor = sys.argv[1], sys.argv[2]
    table = json.loads(subprocess.run([tracegen, "--list", "--json"], check=True,
                                      capture_output=True, text=True).stdout)
    failures, runs = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, sc in enumerate(table):
            for gpus in sorted({sc["min_gpus"], max(sc["min_gpus"], 4)}):
                ext = ".jsonl.zst" if (n + gpus) % 2 else ".jsonl"
                path = os.path.join(tmp, f"{sc['name']}.{gpus}{ext}")
                subprocess.run([tracegen, "--scenario", sc["name"], "--gpus", str(gpus),
                                "--duration", "10m", "-q", "-o", path], check=True)
                p = subprocess.run([gpudoctor, "--kmsg", "none", "diagnose", "--from", path,
                                    "--json"], capture_output=True, text=True, timeout=60)
                runs += 1
                where = f"{sc['name']} ({gpus} GPUs)"
                try:
                    doc = json.loads(p.stdout)
                except ValueError:
                    failures.append(f"{where}: exit {p.returncode}, no JSON: {p.stderr.strip()}")
                    continue
                found = doc["findings"]
                ids = [f["id"] for f in found]
                for want in sc["fires"]:
                    if want not in ids:
                        failures.append(f"{where}: must raise {want}, got {ids}")
                for f in found:
                    if f["id"] in sc["silent"]:
                        failures.append(f"{where}: must not raise {f['id']}: {f['evidence']}")
                    if not KEYS <= set(f):
                        failures.append(f"{where}: {f['id']} lacks {KEYS - set(f)}")
                    if any(g < 0 or g >= gpus for g in f["gpus"]):
                        failures.append(f"{where}: {f['id']} names GPUs {f['gpus']}")
                worst = max((RANK[f["severity"]] for f in found), default=0)
                if p.returncode != worst:
                    failures.append(f"{where}: exit {p.returncode}, worst severity {worst}")
                if doc["window"]["samples"] != 600:
                    failures.append(f"{where}: window {doc['window']}")
    for f in failures:
        print("FAIL", f)
    print(f"{runs} scenario runs, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
