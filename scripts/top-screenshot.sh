#!/usr/bin/env bash
# The picture of `gpudoctor top` (README.md, docs/top.md): runs it in tmux
# (200x50) against the fake NVML's 4-GPU scenario with a real training job
# (a trainer and its data-loader workers) on GPU 0, then writes the screen
# as text (docs/top.txt) and as a PNG (docs/top.png, colours from tmux's
# capture, drawn with Debian's python3-pil in DejaVu Sans Mono).
#   scripts/top-screenshot.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'tmux -S "$tmp/s" kill-server 2>/dev/null || true; kill $(cat "$tmp/pids" 2>/dev/null) 2>/dev/null || true; rm -rf "$tmp"' EXIT
# The job: a trainer with 4 workers busy on CPU.
cat >"$tmp/train.py" <<'PY'
import os, sys, time
pids = [os.getpid()]
for _ in range(4):
    p = os.fork()
    if p == 0:
        end = time.time() + 60
        while time.time() < end: pass
        os._exit(0)
    pids.append(p)
print(" ".join(map(str, pids)), flush=True)
time.sleep(60)
PY
(cd "$tmp" && exec python3 train.py --config configs/resnet50.yaml --epochs 90 >"$tmp/pids") &
sleep 1
read -r trainer _ <"$tmp/pids"
python3 - "$root/tests/data/scenario_4gpu.jsonl" "$trainer" >"$tmp/scenario.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for s in lines[1:]:
    g0 = s["gpus"][0]
    g0["processes"] = [{"pid": int(sys.argv[2]), "used_bytes": 52 << 30, "type": "compute"}] + \
        [p for p in g0["processes"] if p["pid"] != 4242]
for l in lines:
    print(json.dumps(l))
PY
tmux -u -S "$tmp/s" -f /dev/null new-session -d -s t -x 200 -y 50 \
  "env LANG=C.UTF-8 FAKE_NVML_SCENARIO=$tmp/scenario.jsonl $build/src/cli/gpudoctor --nvml-lib $build/tests/fake_nvml/lib/libnvidia-ml.so.1 --kmsg none top; sleep 60"
tmux -S "$tmp/s" set-option -t t status off >/dev/null
sleep 12  # charts fill, CPU rates settle
tmux -S "$tmp/s" send-keys -t t t
sleep 1.5
tmux -S "$tmp/s" capture-pane -p -t t | sed -e 's/[[:space:]]*$//' >"$root/docs/top.txt"
tmux -S "$tmp/s" capture-pane -p -e -t t >"$tmp/ansi.txt"
/usr/bin/python3 "$root/scripts/ansi_png.py" "$tmp/ansi.txt" "$root/docs/top.png"
echo "wrote docs/top.txt and docs/top.png"
