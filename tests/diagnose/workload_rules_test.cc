// Workload rules on hand-built windows: the cases the tracegen scenarios do
// not pin down (allocator churn on a leak, a sawtooth, contended loader
// workers, a job that stalls after losing a GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

constexpr double kMiBd = 1024.0 * 1024.0;

GpuSample gpu_with(int index, double util, uint32_t pid, uint64_t bytes,
                   Jitter& j) {
  GpuSample g = busy_gpu(index, j);
  g.util_pct = util;
  g.processes = std::vector<GpuProcess>{GpuProcess{pid, bytes, "compute"}};
  return g;
}

ProcessSample proc(uint32_t pid, uint32_t ppid, std::string name, double cpu,
                   std::string state) {
  ProcessSample p = process(pid, std::move(name));
  p.ppid = ppid;
  p.cpu_pct = cpu;
  p.state = std::move(state);
  return p;
}

// 20 minutes at 1 Hz of pid 4242 on GPU 0 whose memory follows `mib(i)`.
DiagnoseResult memory_curve(const std::function<double(size_t)>& mib) {
  Jitter j;
  auto samples = make_samples(1200, 1.0, [&](size_t i, Sample& s) {
    s.gpus.push_back(
        gpu_with(0, 95, 4242, static_cast<uint64_t>(mib(i) * kMiBd), j));
    s.processes.push_back(proc(4242, 4000, "python", 100, "R"));
  });
  return run_diagnose(make_header(1), samples);
}

TEST(MemoryLeak, SteadyGrowthWithAllocatorChurnIsStillALeak) {
  // +20 MiB every 20 s (60 MiB/min); every 50 s a 20 MiB segment is taken
  // and given back the next second.
  auto r = memory_curve([](size_t i) {
    double base = 20000 + 20.0 * std::floor(static_cast<double>(i) / 20);
    return base + (i % 50 == 7 ? 20 : 0);
  });
  auto f = with_id(r, "memory-leak");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(contains(f[0].title, "60.0 MiB/min")) << f[0].title;
  EXPECT_TRUE(contains(f[0].evidence, "R^2 ")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "full in about")) << f[0].evidence;
  EXPECT_EQ(f[0].pids, std::vector<uint32_t>{4242});
}

TEST(MemoryLeak, SawtoothThatFreesItsPoolIsNotALeak) {
  // Grows 100 MiB/min for 4 min, then frees back to the base; repeat. With
  // a slow upward drift of the base: the trend is up, but it gives back.
  auto r = memory_curve([](size_t i) {
    double x = static_cast<double>(i);
    return 20000 + x * 0.2 + std::fmod(x, 240) / 60 * 100;
  });
  EXPECT_TRUE(with_id(r, "memory-leak").empty());
}

TEST(MemoryLeak, FlatFullPoolIsNotALeak) {
  auto r = memory_curve(
      [](size_t i) { return i < 30 ? 2000.0 * (1 + i) : 70000.0; });
  EXPECT_TRUE(with_id(r, "memory-leak").empty());
}

// GPU 0 busy 3 s / starved 2 s; rank 4242 with 4 workers in `worker_state`
// at `worker_cpu` % each.
DiagnoseResult loader(double worker_cpu, const std::string& worker_state,
                      double host_cpu = 20, double iowait = 0.3) {
  Jitter j;
  auto samples = make_samples(120, 1.0, [&](size_t i, Sample& s) {
    double util = i % 5 < 3 ? 96 : 4;
    s.gpus.push_back(gpu_with(0, util, 4242, 30 * kGiB, j));
    s.processes.push_back(proc(4242, 4000, "python", 100, "R"));
    for (uint32_t w = 0; w < 4; ++w)
      s.processes.push_back(
          proc(5000 + w, 4242, "pt_data_worker", worker_cpu, worker_state));
    s.host.cpu_util_pct = host_cpu;
    s.host.cpu_iowait_pct = iowait;
  });
  TraceHeader h = make_header(1);
  h.host.cpu_count = 64;
  return run_diagnose(h, samples);
}

TEST(InputBound, SaturatedWorkersWithIdleCpusSayRaiseNumWorkers) {
  auto r = loader(99, "R");
  auto f = with_id(r, "input-bound");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].pids, std::vector<uint32_t>{4242});
  EXPECT_TRUE(contains(f[0].evidence, "in 40% of 120 samples"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "~5.0 s cycle")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "its 4 workers used 99% CPU each"))
      << f[0].evidence;
  // 64 CPUs at 20%: ~51 idle -> more workers.
  EXPECT_TRUE(
      contains(f[0].action, "raise DataLoader num_workers (now 4) towards 8"))
      << f[0].action;
}

TEST(InputBound, RunnableWorkersThatGetLessThanACoreAreStillCpuBound) {
  auto r = loader(35, "R", 97);
  auto f = with_id(r, "input-bound");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(contains(f[0].evidence, "contended")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "no idle CPU")) << f[0].action;
}

TEST(InputBound, SleepingWorkersAreNotTheBottleneck) {
  // Workers wait (S) at 30%: the GPU idles for some other reason.
  EXPECT_TRUE(with_id(loader(30, "S"), "input-bound").empty());
}

TEST(InputBound, StepsAsideWhenTheHostWaitsOnDisk) {
  auto r = loader(99, "R", 40, 35);
  EXPECT_TRUE(with_id(r, "input-bound").empty());
  EXPECT_EQ(with_id(r, "io-bound").size(), 1u);
}

TEST(InputBound, TooFewSamplesSayNothing) {
  Jitter j;
  auto samples = make_samples(8, 1.0, [&](size_t i, Sample& s) {
    s.gpus.push_back(gpu_with(0, i % 2 ? 96 : 4, 4242, 30 * kGiB, j));
    s.processes.push_back(proc(4242, 4000, "python", 100, "R"));
    s.processes.push_back(proc(5000, 4242, "pt_data_worker", 99, "R"));
  });
  EXPECT_TRUE(
      with_id(run_diagnose(make_header(1), samples), "input-bound").empty());
}

// GPU 0 at ~96% with a 2-sample dip to ~60% after each busy run of
// `busy_runs[k]` samples (cycling); rank 4242's 4 workers pegged (R, 99%).
DiagnoseResult swings(const std::vector<size_t>& busy_runs) {
  Jitter j;
  std::vector<double> utils;
  for (size_t k = 0; utils.size() < 300; ++k) {
    utils.insert(utils.end(), busy_runs[k % busy_runs.size()], 96);
    utils.insert(utils.end(), 2, 60);
  }
  auto samples = make_samples(300, 1.0, [&](size_t i, Sample& s) {
    s.gpus.push_back(gpu_with(0, utils[i] + j(3), 4242, 30 * kGiB, j));
    s.processes.push_back(proc(4242, 4000, "python", 100, "R"));
    for (uint32_t w = 0; w < 4; ++w)
      s.processes.push_back(proc(5000 + w, 4242, "pt_data_worker", 99, "R"));
    s.host.cpu_util_pct = 10;
    s.host.cpu_iowait_pct = 0.3;
  });
  TraceHeader h = make_header(1);
  h.host.cpu_count = 64;
  return run_diagnose(h, samples);
}

TEST(InputBound, RegularShallowSwingsWithPeggedWorkersAreInputBound) {
  // 4 s at ~96%, 2 s at ~60%: a 6 s cycle that never goes below 50%.
  auto f = with_id(swings({4}), "input-bound");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(contains(f[0].evidence, "in a regular ~6.0 s cycle"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "its 4 workers used 99% CPU each"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "raise DataLoader num_workers (now 4)"))
      << f[0].action;
}

TEST(InputBound, ShallowSwingsAtRandomTimesAreNotACycle) {
  // The same dips, after busy runs of 1 to 20 samples in no rhythm.
  EXPECT_TRUE(
      with_id(swings({1, 12, 2, 20, 3, 1, 9, 2}), "input-bound").empty());
}

// GPU 0 busy 4 s / starved 6 s, iowait 35%, disks reading `read_mb` MB/s
// and the host swapping `swap_pages` pages/s (in + out, half each).
DiagnoseResult starved_on_disk(double read_mb, double swap_pages) {
  Jitter j;
  auto samples = make_samples(120, 1.0, [&](size_t i, Sample& s) {
    s.gpus.push_back(gpu_with(0, i % 10 < 4 ? 95 : 4, 4242, 30 * kGiB, j));
    s.processes.push_back(proc(4242, 4000, "python", 40, "S"));
    s.processes.push_back(proc(5000, 4242, "pt_data_worker", 10, "D"));
    s.host.cpu_util_pct = 20;
    s.host.cpu_iowait_pct = 35;
    s.host.disk_busy_pct = 97;
    s.host.disk_read_bytes_per_s = static_cast<uint64_t>(read_mb * 1e6);
    s.host.disk_write_bytes_per_s = 0;
    s.host.swap_in_pages_per_s = swap_pages / 2;
    s.host.swap_out_pages_per_s = swap_pages / 2;
  });
  return run_diagnose(make_header(1), samples);
}

TEST(IoBound, DiskTrafficThatIsSwapIsHostSwappingNotIoBound) {
  // 40k pages/s = ~164 MB/s of the 170 MB/s the disks move.
  auto r = starved_on_disk(170, 40000);
  EXPECT_TRUE(with_id(r, "io-bound").empty());
  EXPECT_EQ(with_id(r, "host-swapping").size(), 1u);
}

TEST(IoBound, LightSwappingBesideDatasetReadsIsStillIoBound) {
  // 300 pages/s (~1.2 MB/s) against 180 MB/s of dataset reads: storage.
  auto r = starved_on_disk(180, 300);
  EXPECT_EQ(with_id(r, "io-bound").size(), 1u);
  EXPECT_EQ(with_id(r, "host-swapping").size(), 1u);
}

TEST(GpuImbalance, RanksThatStallAfterAGpuIsLostAreNotImbalanced) {
  Jitter j;
  auto samples = make_samples(200, 1.0, [&](size_t i, Sample& s) {
    bool lost = i >= 100;
    s.processes.push_back(proc(4000, 3000, "torchrun", 1, "S"));
    for (int g = 0; g < 4; ++g) {
      uint32_t rank = 4001 + static_cast<uint32_t>(g);
      s.processes.push_back(proc(rank, 4000, "python", 100, "R"));
      if (g == 3 && lost)
        s.gpus.push_back(lost_gpu(3));
      else
        s.gpus.push_back(gpu_with(g, lost ? 0 : 95 + j(2), rank, 30 * kGiB, j));
    }
  });
  auto r = run_diagnose(make_header(4), samples);
  EXPECT_TRUE(with_id(r, "gpu-imbalance").empty());
  EXPECT_EQ(with_id(r, "gpu-lost").size(), 1u);
}

TEST(GpuImbalance, BusyRankZeroUnderTorchrunIsImbalance) {
  Jitter j;
  auto samples = make_samples(60, 1.0, [&](size_t, Sample& s) {
    s.processes.push_back(proc(4000, 3000, "torchrun", 1, "S"));
    for (int g = 0; g < 2; ++g) {
      uint32_t rank = 4001 + static_cast<uint32_t>(g);
      s.processes.push_back(proc(rank, 4000, "python", 100, "R"));
      s.gpus.push_back(
          gpu_with(g, g == 0 ? 96 : 20 + j(3), rank, 30 * kGiB, j));
    }
  });
  auto f = with_id(run_diagnose(make_header(2), samples), "gpu-imbalance");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].gpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(f[0].pids.front(), 4000u);
  EXPECT_TRUE(contains(f[0].evidence, "GPU 0 96%")) << f[0].evidence;
}

}  // namespace
}  // namespace gd::test
