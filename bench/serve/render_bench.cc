// What one scrape costs on the serving side: rendering /metrics (and the
// JSON status) from a snapshot of an 8-GPU node with 8 processes per GPU.
// The 4-GPU scenario's first sample is doubled to 8 GPUs.
#include <benchmark/benchmark.h>

#include "diagnose/engine.h"
#include "exporter/exporter.h"
#include "serve/api.h"
#include "trace/trace_io.h"
#include "tracegen/tracegen.h"

namespace {

std::shared_ptr<gd::Snapshot> eight_gpu_snapshot() {
  gd::TraceReader reader(std::string(GD_TEST_DATA) + "/scenario_4gpu.jsonl");
  auto header = std::make_shared<gd::TraceHeader>(reader.header());
  auto sample = std::make_shared<gd::Sample>();
  reader.next(*sample);
  const size_t n = header->gpus.size();
  for (size_t i = 0; i < n; ++i) {
    auto info = header->gpus[i];
    info.index = static_cast<int>(n + i);
    info.uuid += "-b";
    header->gpus.push_back(info);
    auto g = sample->gpus[i];
    g.index = static_cast<int>(n + i);
    sample->gpus.push_back(g);
  }
  uint32_t pid = 20000;
  for (auto& g : sample->gpus) {
    g.processes = std::vector<gd::GpuProcess>{};
    for (int k = 0; k < 8; ++k, ++pid) {
      g.processes->push_back({pid, uint64_t{1} << 30, "compute"});
      gd::ProcessSample p;
      p.pid = pid;
      p.ppid = 1;
      p.user = "alice";
      p.name = "python";
      p.cpu_pct = 99.5;
      p.rss_bytes = uint64_t{4} << 30;
      sample->processes.push_back(p);
    }
  }
  auto s = std::make_shared<gd::Snapshot>();
  s->header = header;
  s->sample = sample;
  for (const auto& g : sample->gpus)
    s->gpu_health.push_back({g.index, true, false, sample->t});
  for (int i = 0; i < 3; ++i) {
    gd::TrackedAlert a;
    a.finding.id = "thermal-throttling";
    a.finding.severity = "warning";
    a.finding.gpus = {i};
    a.state = "firing";
    s->alerts.push_back(a);
  }
  s->version = "bench";
  return s;
}

void BM_RenderMetrics8Gpus(benchmark::State& state) {
  auto snap = eight_gpu_snapshot();
  size_t bytes = 0;
  for (auto _ : state) {
    auto reply = gd::api_metrics(*snap, snap->sample->t + 1);
    bytes = reply.body.size();
    benchmark::DoNotOptimize(reply);
  }
  state.counters["page_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RenderMetrics8Gpus)->Unit(benchmark::kMicrosecond);

// The datacenter node: 8 H100s x 7 MIG instances with GPM, 18 NVLinks each
// (tracegen's mig-h100-full).
std::shared_ptr<gd::Snapshot> datacenter_snapshot() {
  gd::tracegen::Options o;
  o.gpus = 8;
  o.duration_s = 1;
  auto header = std::make_shared<gd::TraceHeader>();
  auto sample = std::make_shared<gd::Sample>(
      gd::tracegen::generate_all("mig-h100-full", o, header.get()).back());
  auto s = std::make_shared<gd::Snapshot>();
  s->header = header;
  s->sample = sample;
  for (const auto& g : sample->gpus)
    s->gpu_health.push_back({g.index, true, false, sample->t});
  s->version = "bench";
  return s;
}

void BM_RenderMetricsDatacenter(benchmark::State& state) {
  auto snap = datacenter_snapshot();
  size_t bytes = 0;
  for (auto _ : state) {
    auto reply = gd::api_metrics(*snap, snap->sample->t + 1);
    bytes = reply.body.size();
    benchmark::DoNotOptimize(reply);
  }
  state.counters["page_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RenderMetricsDatacenter)->Unit(benchmark::kMicrosecond);

void BM_StatusJson8Gpus(benchmark::State& state) {
  auto snap = eight_gpu_snapshot();
  for (auto _ : state) {
    auto reply = gd::api_status(*snap, snap->sample->t + 1);
    benchmark::DoNotOptimize(reply);
  }
}
BENCHMARK(BM_StatusJson8Gpus)->Unit(benchmark::kMicrosecond);

// The alerting evaluation the sampling loop runs every few seconds: every rule
// over a 60-sample window of the 8-GPU node.
void BM_EvaluateWindow60x8Gpus(benchmark::State& state) {
  auto snap = eight_gpu_snapshot();
  std::vector<gd::Sample> window;
  for (int i = 0; i < 60; ++i) {
    gd::Sample s = *snap->sample;
    s.t += i;
    window.push_back(std::move(s));
  }
  size_t findings = 0;
  for (auto _ : state) {
    gd::VectorSampleSource source(window);
    auto result = gd::diagnose(*snap->header, source, gd::DiagnoseOptions{});
    findings = result.findings.size();
    benchmark::DoNotOptimize(result);
  }
  state.counters["findings"] = static_cast<double>(findings);
}
BENCHMARK(BM_EvaluateWindow60x8Gpus)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
