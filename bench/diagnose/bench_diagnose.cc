// The diagnosis engine with every rule, over samples streamed from tracegen
// (no file IO): the cost of one sample through all rules, by layout. The
// end-to-end goal (a 24 h, 8-GPU trace from disk in < 2 s) is
// diagnose_24h.py; this isolates the rules from trace parsing.
#include <benchmark/benchmark.h>

#include "diagnose/engine.h"
#include "tracegen/tracegen.h"

namespace {

class GeneratorSource : public gd::SampleSource {
 public:
  explicit GeneratorSource(gd::tracegen::Generator& gen) : gen_(gen) {}
  bool next(gd::Sample& out) override { return gen_.next(out); }

 private:
  gd::tracegen::Generator& gen_;
};

// args: GPUs, processes. One hour at 1 Hz per iteration; tracegen's own cost
// is measured separately (BM_TracegenOnly) so it can be subtracted.
void BM_DiagnoseHour(benchmark::State& state, const char* scenario) {
  gd::tracegen::Options opt;
  opt.gpus = static_cast<int>(state.range(0));
  opt.processes = static_cast<int>(state.range(1));
  opt.duration_s = 3600;
  size_t findings = 0;
  for (auto _ : state) {
    gd::tracegen::Generator gen(scenario, opt);
    GeneratorSource source(gen);
    auto result = gd::diagnose(gen.header(), source, gd::DiagnoseOptions{});
    findings = result.findings.size();
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations() * 3600);
  state.counters["findings"] = static_cast<double>(findings);
}

void BM_TracegenOnly(benchmark::State& state, const char* scenario) {
  gd::tracegen::Options opt;
  opt.gpus = static_cast<int>(state.range(0));
  opt.processes = static_cast<int>(state.range(1));
  opt.duration_s = 3600;
  gd::Sample s;
  for (auto _ : state) {
    gd::tracegen::Generator gen(scenario, opt);
    while (gen.next(s)) benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations() * 3600);
}

BENCHMARK_CAPTURE(BM_DiagnoseHour, input_bound, "input-bound")
    ->Args({8, 16})
    ->Args({8, 200})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DiagnoseHour, healthy, "healthy-training")
    ->Args({8, 16})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TracegenOnly, input_bound, "input-bound")
    ->Args({8, 16})
    ->Args({8, 200})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
