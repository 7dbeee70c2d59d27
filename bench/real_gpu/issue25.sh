#!/bin/bash
# On a machine with a real NVIDIA GPU, PyTorch and gpudoctor on PATH (a
# release bundle: its bin/ on PATH, its lib/ on LD_LIBRARY_PATH): the
# one-shot wall beside nvidia-smi (and an older build, BASE), where
# `status` spends it (GD_TIMING), the orphaned child (a PyTorch process
# forks and exits), and a first window as an operator meets it: a fast leak,
# an idle 10 GiB holder, a CPU-hungry GPU job started from bash while 48
# unrelated busy processes saturate the CPUs, serve running. Output and
# traces go to OUT (default /tmp/out). About 2 minutes.
#   bench/real_gpu/issue25.sh [BASE_GPUDOCTOR]
set -u
B=$(cd "$(dirname "$0")" && pwd)
O=${OUT:-/tmp/out}; mkdir -p $O
base=${1:-}
s() { echo; echo "### $*"; echo "[$(date +%T)]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s "one-shot wall: gpudoctor (new) beside nvidia-smi and the build before"
bash $B/../real_gpu_status.sh "$(command -v gpudoctor)" 15 $base 2>&1 | head -12
s "GD_TIMING=1 gpudoctor status (3 runs)"
for i in 1 2 3; do GD_TIMING=1 gpudoctor status 2>&1 >/dev/null | tr '\n' ' ' | sed 's/gpudoctor: timing: //g'; echo; done
s "orphaned child (final code)"
IFS=, read parent child < <(python3 $B/orphan.py 2>/dev/null)
echo "parent=$parent child=$child"; sleep 2
gpudoctor who 0; gpudoctor ps | tail -6
gpudoctor kill --gpu 0 --dry-run; echo rc=$?
gpudoctor kill $child --yes --timeout 20s; echo rc=$?
s "the issue's window: serve, fast leak, idle holder, job from bash, 48 busy processes"
gpudoctor serve --db /tmp/h.db --listen 127.0.0.1:9856 >$O/serve2.log 2>&1 & SP=$!
python3 $B/idle.py & IP=$!
bash -c "python3 $B/job.py; true" & JP=$!
python3 $B/leak.py 0.5 45 & LP=$!
bash $B/busy.sh
sleep 4
gpudoctor record -o $O/h200-contention-leak.jsonl --duration 34s >/dev/null 2>&1 & RP=$!
s "diagnose --duration 15s (live; serve has a few seconds of history)"
gpudoctor diagnose --duration 15s; echo rc=$?
s "diagnose --duration 15s --json: not_judged"
gpudoctor diagnose --duration 15s --serve none --json > $O/diagnose-15s.json; echo rc=$?
python3 -c "import json;d=json.load(open('$O/diagnose-15s.json'));print([f['id'] for f in d['findings']]);print(d.get('not_judged'))"
wait $RP
s "diagnose --from the 34 s recording"
gpudoctor diagnose --from $O/h200-contention-leak.jsonl; echo rc=$?
pkill -x yes; kill $IP $JP $LP $SP 2>/dev/null; pkill -f job.py
wait 2>/dev/null
ls -la $O
