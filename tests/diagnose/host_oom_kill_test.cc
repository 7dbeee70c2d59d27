// host-oom-kill.
#include <gtest/gtest.h>

#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

Event oom(std::optional<uint32_t> pid, std::string text) {
  Event e;
  e.kind = "oom_kill";
  e.pid = pid;
  e.text = std::move(text);
  return e;
}

TEST(HostOomKill, KilledGpuProcessIsWarningNamingItAndItsGpu) {
  auto h = make_header(2);
  Jitter j;
  auto samples = make_samples(60, 1.0, [&](size_t i, Sample& s) {
    auto g = busy_gpu(1, j);
    s.gpus.push_back(busy_gpu(0, j));
    if (i < 30) {
      g.processes = std::vector<GpuProcess>{{4242, 40 * kGiB, "compute"}};
      s.processes.push_back(process(4242, "python"));
      s.host.mem_available_bytes = (32 - i) * kGiB;
    }
    s.gpus.push_back(g);
    if (i == 30)
      s.events.push_back(
          oom(4242,
              "Out of memory: Killed process 4242 (python) total-vm:123456kB, "
              "anon-rss:500000000kB"));
  });
  auto f = with_id(run_diagnose(h, samples), "host-oom-kill");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "warning");
  EXPECT_EQ(f[0].pids, std::vector<uint32_t>{4242});
  EXPECT_EQ(f[0].gpus, std::vector<int>{1});
  EXPECT_TRUE(contains(f[0].evidence, "python (pid 4242) using GPU 1"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "MemAvailable min")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "host ran out of RAM")) << f[0].action;
  EXPECT_DOUBLE_EQ(f[0].start, kT0 + 30);
}

TEST(HostOomKill, CgroupLimitIsToldApartFromHostMemory) {
  auto h = make_header(1);
  auto samples = make_samples(10, 1.0, [&](size_t i, Sample& s) {
    if (i == 5)
      s.events.push_back(oom(
          std::nullopt,
          "Memory cgroup out of memory: Killed process 777 (pt_data_worker) "
          "total-vm:1kB, anon-rss:1kB, oom_memcg=/kubepods/pod1"));
  });
  auto f = with_id(run_diagnose(h, samples), "host-oom-kill");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].pids, std::vector<uint32_t>{777});  // parsed from the line
  EXPECT_TRUE(contains(f[0].evidence, "pt_data_worker (pid 777)"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "cgroup")) << f[0].action;
}

TEST(HostOomKill, SilentWithoutOomEventsEvenWhenMemoryIsLow) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(60, 1.0, [&](size_t, Sample& s) {
    s.gpus.push_back(busy_gpu(0, j));
    s.host.mem_available_bytes = kGiB / 2;
  });
  EXPECT_TRUE(with_id(run_diagnose(h, samples), "host-oom-kill").empty());
}

}  // namespace
}  // namespace gd::test
