#!/usr/bin/env bash
# Builds the benchmarks (Release) and prints every number that
# docs/benchmarks.md reports.
#   bench/run.sh [BUILD_DIR]      (default build-bench)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-bench}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DGD_BUILD_BENCH=ON -DGD_BUILD_TESTS=ON >"$build.log" 2>&1 ||
  { tail -20 "$build.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" >>"$build.log" 2>&1 ||
  { grep -E "error|FAILED" "$build.log" | head -20; exit 1; }

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
echo "== one full sample (8 fake GPUs via dlopen, host, ~500 processes); goal < 2 ms CPU"
echo "   (paced at 5 samples/s after 20 warm-up samples; variants in bench/sample_bench.cc)"
"$build/bench/bench_sample"
echo "== host source"
"$build/bench/procfs/bench_procfs" --benchmark_min_time=0.2
echo "== RDMA ports: 8 InfiniBand ports per sample; goal < 50 us"
"$build/bench/procfs/bench_rdma" --benchmark_min_time=0.2
echo "== trace read/write"
"$build/bench/trace/bench_trace" --benchmark_min_time=0.2
gd="$build/src/cli/gpudoctor"
echo "== diagnose --from a 24 h, 8-GPU, 1 Hz trace with 16 processes (every"
echo "   field of trace-format version 1 and its additions); goal < 2 s, < 200 MB"
python3 "$root/bench/diagnose/diagnose_24h.py" \
  "$build/tools/tracegen/gpudoctor-tracegen" "$gd" --dir "$build"
echo "== status wall time from process start; goal < 50 ms"
fake="$build/tests/fake_nvml/lib/libnvidia-ml.so.1"
python3 "$root/bench/status_wall.py" "$gd"
python3 "$root/bench/status_wall.py" "$gd" "$fake" "$root/tests/data/scenario_4gpu.jsonl"
baseline=()
[[ -n "${GD_BASELINE_GPUDOCTOR:-}" ]] && baseline=(--baseline "$GD_BASELINE_GPUDOCTOR")
echo "== status CPU and wall beside nvtop -s, fake NVML, 4 GPUs; goal: CPU at most"
echo "   nvtop -s's, wall at most half (NVTOP=<nvtop 3.1+ with -s>, else the anchor)"
nvtop=${NVTOP:-$(command -v nvtop || true)}
if [[ -n "$nvtop" ]] && "$nvtop" --help 2>&1 | grep -q -- --snapshot; then
  nvtop_arg=(--nvtop "$nvtop")
else
  nvtop_arg=()
fi
for idle in 0 1000 3000; do
  python3 "$root/bench/status_cost.py" "$gd" "$fake" "$root/tests/data/scenario_4gpu.jsonl" \
    --runs 20 --idle "$idle" "${nvtop_arg[@]}" "${baseline[@]}"
done
echo "== status wall time, fake NVML with the H200's call costs (FAKE_NVML_COSTS);"
echo "   goal: half of nvidia-smi's wall on the real H200 (103.7 ms, -q 112.3 ms)"
echo "   set GD_BASELINE_GPUDOCTOR=<older gpudoctor> to alternate it with this one"
costs="$root/tests/data/real_gpu/nvml-call-costs.txt"
h200="$root/tests/data/real_gpu/h200-matmul.jsonl"
python3 "$root/bench/status_wall.py" "$gd" "$fake" "$h200" --costs "$costs" \
  --runs 20 "${baseline[@]}"
python3 "$root/bench/status_wall.py" "$gd" "$fake" "$h200" --costs "$costs" \
  --runs 20 --json "${baseline[@]}"
# Benchmarks other areas add (diagnose, store, serve) as bench/<area>/run.sh.
for script in "$root"/bench/*/run.sh; do
  [[ -x "$script" ]] || continue
  echo "== $(basename "$(dirname "$script")")"
  "$script" "$build"
done
