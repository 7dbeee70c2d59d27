#!/usr/bin/env bash
# Load and footprint of `gpudoctor serve` with 8 (fake) GPUs, beside Debian's
# prometheus-node-exporter for scale. Prints numbers; asserts nothing.
#
#   bench/serve_load/run.sh [BUILD_DIR]      default: build
#
# BUILD_DIR must hold the targets gpudoctor, fake_nvml and gpudoctor-tracegen:
#   cmake --build BUILD_DIR --target gpudoctor fake_nvml gpudoctor-tracegen
# Needs wrk (Debian `wrk`); node_exporter (`prometheus-node-exporter`) is
# optional. Environment: IDLE_S (60) seconds of idle CPU measurement,
# LOAD_S (15) seconds per wrk run, CONNECTIONS (4), THREADS (2), GPUS (8).
# 4 connections stand for an HA pair of Prometheus servers plus Grafana and
# API clients; a connection beyond serve's worker threads waits for a worker.
#
# Goals (see the serve issue): /metrics >= 5000 req/s with p99 < 5 ms on
# loopback; the daemon idle at 1 Hz under 1% of one core and 30 MB RSS.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
gpudoctor=$build/src/cli/gpudoctor
fake=$build/tests/fake_nvml/lib/libnvidia-ml.so.1
tracegen=$build/tools/tracegen/gpudoctor-tracegen
IDLE_S=${IDLE_S:-60}
LOAD_S=${LOAD_S:-15}
CONNECTIONS=${CONNECTIONS:-4}
THREADS=${THREADS:-2}
GPUS=${GPUS:-8}

for f in "$gpudoctor" "$fake" "$tracegen"; do
  [[ -e $f ]] || { echo "run.sh: $f: not built (see the header of $0)" >&2; exit 1; }
done
command -v wrk >/dev/null || { echo "run.sh: wrk: not installed (apt install wrk)" >&2; exit 1; }

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

wait_http() {  # URL: up to 30 s
  for _ in $(seq 300); do
    python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' \
      "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "run.sh: $1 did not answer" >&2
  return 1
}

clk_tck=$(getconf CLK_TCK)
cpu_ticks() {  # PID: utime + stime in clock ticks
  # Field 2 (comm) may contain spaces: take the fields after the last ')'.
  awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}
rss_kib() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/status"; }

wrk_run() {  # LABEL URL
  local out
  out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"${LOAD_S}s" -s "$here/report.lua" "$2")
  local get
  get() { awk -v k="$1" '$1 == k { print $2 }' <<<"$out"; }
  printf '%-34s %8s req/s  p50 %6s ms  p99 %6s ms  p99.9 %6s ms  %7s B/page  errors %s\n' \
    "$1" "$(get rps)" "$(get p50_ms)" "$(get p99_ms)" "$(get p99.9_ms)" \
    "$(get bytes_per_request)" "$(get errors)"
}

# An 8-GPU DDP job with realistic noise; looped so it never runs out.
"$tracegen" --scenario healthy-training --gpus "$GPUS" --duration 10m --interval 1s \
  --seed 7 -q -o "$tmp/scenario.jsonl"

port=$(free_port)
FAKE_NVML_SCENARIO=$tmp/scenario.jsonl FAKE_NVML_LOOP=1 \
  "$gpudoctor" --nvml-lib "$fake" --kmsg none --interval 1s \
  serve --listen "127.0.0.1:$port" --no-db >"$tmp/serve.log" 2>&1 &
serve_pid=$!
pids+=("$serve_pid")
wait_http "http://127.0.0.1:$port/healthz"
sleep 3  # first samples and diagnosis

echo "gpudoctor serve: $GPUS fake GPUs, 1 s interval; machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "goals: /metrics >= 5000 req/s, p99 < 5 ms; idle < 1% of a core, RSS < 30 MB"
page_bytes=$(python3 -c "import sys,urllib.request; print(len(urllib.request.urlopen(sys.argv[1]).read()))" \
  "http://127.0.0.1:$port/metrics")
series=$(python3 -c "import sys,urllib.request; print(sum(1 for l in urllib.request.urlopen(sys.argv[1]).read().decode().splitlines() if l and l[0] != '#'))" \
  "http://127.0.0.1:$port/metrics")
echo "  /metrics page: $page_bytes bytes, $series series"

# Idle footprint: collection at 1 Hz, no scrapes.
t0=$(cpu_ticks "$serve_pid")
sleep "$IDLE_S"
t1=$(cpu_ticks "$serve_pid")
awk -v d=$((t1 - t0)) -v hz="$clk_tck" -v s="$IDLE_S" \
  'BEGIN { printf "  idle CPU over %d s: %.2f%% of one core (%d ticks at %d Hz)\n", s, 100 * d / hz / s, d, hz }'
echo "  RSS: $(( $(rss_kib "$serve_pid" VmRSS) / 1024 )) MiB (peak $(( $(rss_kib "$serve_pid" VmHWM) / 1024 )) MiB)"

# The same with a Prometheus-like scrape of /metrics every second.
python3 - "http://127.0.0.1:$port/metrics" <<'PY' &
import sys, time, urllib.request
while True:
    urllib.request.urlopen(sys.argv[1], timeout=5).read()
    time.sleep(1)
PY
scraper_pid=$!
pids+=("$scraper_pid")
t0=$(cpu_ticks "$serve_pid")
sleep "$IDLE_S"
t1=$(cpu_ticks "$serve_pid")
kill "$scraper_pid"
awk -v d=$((t1 - t0)) -v hz="$clk_tck" -v s="$IDLE_S" \
  'BEGIN { printf "  CPU with a 1 s scrape over %d s: %.2f%% of one core (%d ticks)\n", s, 100 * d / hz / s, d }'

# Scrape load.
echo "wrk: $THREADS threads, $CONNECTIONS connections, ${LOAD_S}s each, loopback"
wrk_run "gpudoctor serve /metrics" "http://127.0.0.1:$port/metrics"
echo "  RSS after load: $(( $(rss_kib "$serve_pid" VmRSS) / 1024 )) MiB (peak $(( $(rss_kib "$serve_pid" VmHWM) / 1024 )) MiB)"
wrk_run "gpudoctor serve /healthz" "http://127.0.0.1:$port/healthz"

# The datacenter node: 8 H100s, each split into 7 MIG instances with a job
# on each, GPM per instance and 18 NVLinks (goal: /metrics >= 5000 req/s,
# p99 < 5 ms).
"$tracegen" --scenario mig-h100-full --gpus "$GPUS" --duration 1m --interval 1s \
  --seed 7 -q -o "$tmp/dc.jsonl"
dc_port=$(free_port)
FAKE_NVML_SCENARIO=$tmp/dc.jsonl FAKE_NVML_LOOP=1 \
  "$gpudoctor" --nvml-lib "$fake" --kmsg none --interval 1s \
  serve --listen "127.0.0.1:$dc_port" --no-db >"$tmp/serve-dc.log" 2>&1 &
dc_pid=$!
pids+=("$dc_pid")
wait_http "http://127.0.0.1:$dc_port/healthz"
sleep 3
dc_bytes=$(python3 -c "import sys,urllib.request; print(len(urllib.request.urlopen(sys.argv[1]).read()))" \
  "http://127.0.0.1:$dc_port/metrics")
dc_series=$(python3 -c "import sys,urllib.request; print(sum(1 for l in urllib.request.urlopen(sys.argv[1]).read().decode().splitlines() if l and l[0] != '#'))" \
  "http://127.0.0.1:$dc_port/metrics")
echo "gpudoctor serve, $GPUS H100s x 7 MIG instances, GPM, 18 NVLinks: /metrics $dc_bytes bytes, $dc_series series"
wrk_run "gpudoctor serve /metrics (MIG+NVLink)" "http://127.0.0.1:$dc_port/metrics"
echo "  RSS after load: $(( $(rss_kib "$dc_pid" VmRSS) / 1024 )) MiB"

if command -v prometheus-node-exporter >/dev/null; then
  ne_port=$(free_port)
  prometheus-node-exporter --web.listen-address="127.0.0.1:$ne_port" >"$tmp/ne.log" 2>&1 &
  ne_pid=$!
  pids+=("$ne_pid")
  wait_http "http://127.0.0.1:$ne_port/metrics"
  ne_bytes=$(python3 -c "import sys,urllib.request; print(len(urllib.request.urlopen(sys.argv[1]).read()))" \
    "http://127.0.0.1:$ne_port/metrics")
  echo "prometheus-node-exporter $(prometheus-node-exporter --version 2>&1 | awk 'NR==1 {print $3}') (default collectors): /metrics $ne_bytes bytes"
  wrk_run "node_exporter /metrics" "http://127.0.0.1:$ne_port/metrics"
  echo "  node_exporter RSS after load: $(( $(rss_kib "$ne_pid" VmRSS) / 1024 )) MiB"
else
  echo "prometheus-node-exporter not installed: no comparison (apt install prometheus-node-exporter)"
fi
