// CPU time of the host side of a sample. Before the benchmarks run, the
// machine is brought to kTargetProcesses processes with idle fillers, and a
// "GPU job" (a parent with kWorkers children, like a training process with
// its data-loader workers) is started; processes() is asked about the job.
#include <benchmark/benchmark.h>
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "procfs/host_source.h"
#include "procfs/process_table.h"

namespace {

constexpr int kTargetProcesses = 500;
constexpr int kWorkers = 8;

pid_t g_job = -1;
std::vector<pid_t> g_fillers;

int count_processes() {
  int n = 0;
  DIR* d = opendir("/proc");
  while (dirent* e = readdir(d))
    n += (e->d_name[0] >= '1' && e->d_name[0] <= '9');
  closedir(d);
  return n;
}

pid_t spawn_idle() {
  pid_t pid = fork();
  if (pid == 0) {
    for (;;) pause();
  }
  return pid;
}

void start_processes() {
  g_job = fork();
  if (g_job == 0) {
    std::vector<pid_t> workers;
    for (int i = 0; i < kWorkers; ++i) workers.push_back(spawn_idle());
    for (;;) pause();  // killed by stop_processes()
    _exit(0);
  }
  usleep(100000);
  for (int n = count_processes(); n < kTargetProcesses; ++n)
    g_fillers.push_back(spawn_idle());
  usleep(100000);
  std::fprintf(stderr,
               "processes on the machine: %d (job %d with %d workers)\n",
               count_processes(), g_job, kWorkers);
}

void stop_processes() {
  for (pid_t p : g_fillers) kill(p, SIGKILL);
  if (g_job > 0) {
    // Workers were forked by the job; find them by parent and kill them.
    gd::procfs::ProcessTable table("/proc");
    for (const auto& p :
         table.processes({static_cast<uint32_t>(g_job)}, 0, std::nullopt))
      if (p.pid != static_cast<uint32_t>(g_job))
        kill(static_cast<pid_t>(p.pid), SIGKILL);
    kill(g_job, SIGKILL);
  }
  while (waitpid(-1, nullptr, 0) > 0) {
  }
}

void BM_HostSample(benchmark::State& state) {
  gd::HostSource c;
  double t = 1;
  for (auto _ : state) benchmark::DoNotOptimize(c.sample(t += 1));
}
BENCHMARK(BM_HostSample);

// Steady state at one sample per second: user/cmdline/cgroup/maps are
// re-read every 30th call.
void BM_ProcessesOfJob(benchmark::State& state) {
  gd::HostSource c;
  double t = 1;
  std::vector<uint32_t> gpu_pids{static_cast<uint32_t>(g_job)};
  size_t n = 0;
  for (auto _ : state) n = c.processes(gpu_pids, t += 1).size();
  state.counters["listed"] = static_cast<double>(n);
}
BENCHMARK(BM_ProcessesOfJob);

// Worst case: an empty cache (first sample, or every process new).
void BM_ProcessesOfJobCold(benchmark::State& state) {
  std::vector<uint32_t> gpu_pids{static_cast<uint32_t>(g_job)};
  for (auto _ : state) {
    gd::HostSource c;
    benchmark::DoNotOptimize(c.processes(gpu_pids, 1));
  }
}
BENCHMARK(BM_ProcessesOfJobCold);

void BM_FullHostSample(benchmark::State& state) {
  gd::HostSource c;
  double t = 1;
  std::vector<uint32_t> gpu_pids{static_cast<uint32_t>(g_job)};
  for (auto _ : state) {
    t += 1;
    benchmark::DoNotOptimize(c.sample(t));
    benchmark::DoNotOptimize(c.processes(gpu_pids, t));
  }
}
BENCHMARK(BM_FullHostSample);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  start_processes();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  stop_processes();
  return 0;
}
