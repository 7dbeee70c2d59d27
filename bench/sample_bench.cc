// CPU time of one full sample: 8 GPUs in the fake NVML (no injected latency),
// the host, and ~500 tracked processes (8 GPU jobs with 61 workers each).
// Goal (issue 3): under 2 ms of CPU per sample.
#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "collect/sampler.h"
#include "trace/trace_io.h"

namespace {

constexpr int kGpus = 8;
constexpr int kWorkersPerJob = 61;

// A GPU job: a parent with sleeping children (its data-loader workers).
pid_t spawn_job() {
  pid_t job = fork();
  if (job == 0) {
    setpgid(0, 0);
    for (int i = 0; i < kWorkersPerJob; ++i)
      if (fork() == 0) {
        pause();
        _exit(0);
      }
    pause();
    _exit(0);
  }
  return job;
}

std::string write_scenario(const std::vector<pid_t>& jobs) {
  gd::TraceHeader h;
  h.driver = gd::DriverInfo{"550.54.15", "12.4", "12.550.54.15"};
  gd::Sample s;
  s.t = 1.7e9;
  for (int i = 0; i < kGpus; ++i) {
    gd::GpuInfo g;
    g.index = i;
    g.uuid = "GPU-bench-" + std::to_string(i);
    g.name = "NVIDIA H100 80GB HBM3";
    g.pci_bus_id = "00000000:" + std::to_string(10 + i) + ":00.0";
    g.memory_total_bytes = 85ull << 30;
    g.power_limit_w = 700;
    g.pcie_max_gen = 5;
    g.pcie_max_width = 16;
    h.gpus.push_back(g);
    gd::GpuSample gs;
    gs.index = i;
    gs.util_pct = 90;
    gs.mem_util_pct = 50;
    gs.mem_used_bytes = 60ull << 30;
    gs.temp_c = 65;
    gs.power_w = 550;
    gs.sm_clock_mhz = 1980;
    gs.mem_clock_mhz = 2619;
    gs.clock_event_reasons = std::vector<std::string>{};
    gs.pcie_gen = 5;
    gs.pcie_width = 16;
    gs.processes = std::vector<gd::GpuProcess>{
        {static_cast<uint32_t>(jobs[i]), 60ull << 30, "compute"}};
    s.gpus.push_back(gs);
  }
  std::string path = "/tmp/gd_bench_scenario_" + std::to_string(getpid()) + ".jsonl";
  gd::TraceWriter w(path);
  w.write_header(h);
  w.write_sample(s);
  w.close();
  return path;
}

void BM_FullSample(benchmark::State& state) {
  std::vector<pid_t> jobs;
  for (int i = 0; i < kGpus; ++i) jobs.push_back(spawn_job());
  usleep(300 * 1000);  // let the workers start
  std::string scenario = write_scenario(jobs);
  setenv("FAKE_NVML_SCENARIO", scenario.c_str(), 1);
  {
    gd::SamplerOptions o;
    o.nvml_lib = FAKE_NVML_PATH;
    o.kmsg_path = "";
    gd::Sampler sampler(o);
    sampler.sample();  // warm caches as a daemon would be
    size_t procs = 0;
    for (auto _ : state) {
      gd::Sample s = sampler.sample();
      procs = s.processes.size();
      benchmark::DoNotOptimize(s);
    }
    state.counters["tracked_processes"] = static_cast<double>(procs);
    state.counters["gpus"] = kGpus;
  }
  for (pid_t j : jobs) kill(-j, SIGKILL);
  for (pid_t j : jobs) waitpid(j, nullptr, 0);
  std::remove(scenario.c_str());
}
BENCHMARK(BM_FullSample)->MeasureProcessCPUTime()->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
