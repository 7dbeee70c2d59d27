// dev-shm-small: a job with loader workers and a /dev/shm too small for
// them; silent without workers or with room enough.
#include <gtest/gtest.h>

#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

// GPU 0 used by pid 100 with `workers` children, /dev/shm of `shm` bytes
// as they see it (nullopt: unknown).
std::vector<Finding> job(int workers, std::optional<uint64_t> shm) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(30, 1.0, [&](size_t, Sample& s) {
    auto g = busy_gpu(0, j);
    g.processes->push_back({100, 40 * kGiB, "compute"});
    s.gpus.push_back(g);
    auto main = process(100, "python");
    main.dev_shm_bytes = shm;
    main.ns_pid = 1;
    s.processes.push_back(main);
    for (int w = 0; w < workers; ++w) {
      auto worker = process(200 + static_cast<uint32_t>(w), "pt_data_worker");
      worker.ppid = 100;
      worker.dev_shm_bytes = shm;
      s.processes.push_back(worker);
    }
  });
  return with_id(run_diagnose(h, samples), "dev-shm-small");
}

TEST(DevShmSmall, DockerDefaultWithWorkersIsAWarning) {
  auto f = job(4, 64 * kMiB);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "warning");
  EXPECT_EQ(f[0].pids, std::vector<uint32_t>{100});
  EXPECT_TRUE(contains(f[0].evidence,
                       "(pid 1 in its container) on GPU 0 sees a 64 MiB "
                       "/dev/shm with 4 worker processes: 16 MiB a worker"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "--shm-size=16g")) << f[0].action;
  EXPECT_TRUE(contains(f[0].action, "emptyDir: {medium: Memory}"))
      << f[0].action;
}

TEST(DevShmSmall, SilentWithoutWorkers) {
  EXPECT_TRUE(job(0, 64 * kMiB).empty());
}

TEST(DevShmSmall, SilentWhenLargeEnoughForItsWorkers) {
  EXPECT_TRUE(job(1, 512 * kMiB).empty());    // 512 MiB for one worker
  EXPECT_TRUE(job(16, 2048 * kMiB).empty());  // above 1 GiB
  EXPECT_TRUE(job(4, std::nullopt).empty());  // not known
}

}  // namespace
}  // namespace gd::test
