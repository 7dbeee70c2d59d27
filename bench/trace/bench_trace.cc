// Trace read/write speed. The target that matters: `diagnose --from` on a
// 24 h, 8-GPU, 1 Hz trace (86,400 lines of ~8-GPU/16-process samples) in
// under 2 s, so one line must parse in well under 20 us.
//
//   bench_trace --benchmark_filter=FromJson
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "trace/trace_io.h"
#include "trace_fixtures.h"

namespace {

const std::string& realistic_line() {
  static const std::string line =
      gd::sample_to_json(gd::testing::realistic_sample(8, 16, 1732262400.0));
  return line;
}

void BM_SampleFromJson(benchmark::State& state) {
  const std::string& line = realistic_line();
  const std::string where = "bench:2";
  gd::Sample s;
  for (auto _ : state) {
    gd::sample_from_json(line, where, s);
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * line.size()));
  state.SetItemsProcessed(state.iterations());  // lines
  state.counters["line_bytes"] = static_cast<double>(line.size());
}
BENCHMARK(BM_SampleFromJson);

void BM_SampleToJson(benchmark::State& state) {
  const gd::Sample s = gd::testing::realistic_sample(8, 16, 1732262400.0);
  std::string out;
  for (auto _ : state) {
    out.clear();
    gd::append_sample_json(out, s);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * out.size()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SampleToJson);

// Whole-file reading through TraceReader (line splitting, zstd, time-order
// check included). Arg: 0 = plain, 1 = zstd.
void BM_TraceReaderFile(benchmark::State& state) {
  const int kLines = 3600;  // one hour at 1 Hz
  const bool zstd = state.range(0) != 0;
  const std::string path = "/tmp/bench_trace_" + std::to_string(::getpid()) +
                           (zstd ? ".jsonl.zst" : ".jsonl");
  size_t json_bytes = 0;
  {
    gd::TraceWriter w(path);
    w.write_header(gd::testing::full_header());
    for (int i = 0; i < kLines; ++i) {
      const gd::Sample s =
          gd::testing::realistic_sample(8, 16, 1732262400.0 + i);
      json_bytes += gd::sample_to_json(s).size() + 1;
      w.write_sample(s);
    }
    w.close();
  }
  for (auto _ : state) {
    gd::TraceReader r(path);
    gd::Sample s;
    int n = 0;
    while (r.next(s)) ++n;
    if (n != kLines) state.SkipWithError("wrong number of samples");
  }
  std::remove(path.c_str());
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * json_bytes));
  state.SetItemsProcessed(state.iterations() * kLines);
}
BENCHMARK(BM_TraceReaderFile)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_TraceWriterFile(benchmark::State& state) {
  const bool zstd = state.range(0) != 0;
  const std::string path = "/tmp/bench_trace_w_" + std::to_string(::getpid()) +
                           (zstd ? ".jsonl.zst" : ".jsonl");
  const gd::Sample proto = gd::testing::realistic_sample(8, 16, 0);
  const int kLines = 3600;
  for (auto _ : state) {
    gd::TraceWriter w(path);
    w.write_header(gd::testing::full_header());
    gd::Sample s = proto;
    for (int i = 0; i < kLines; ++i) {
      s.t = 1732262400.0 + i;
      w.write_sample(s);
    }
    w.close();
  }
  std::remove(path.c_str());
  state.SetItemsProcessed(state.iterations() * kLines);
}
BENCHMARK(BM_TraceWriterFile)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
