// orphaned-memory gives the figure who, top and the dashboard give (used
// minus the live processes: model/memory_owners.h), also when NVML lists
// the dead owner without a memory figure.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/memory_owners.h"
#include "model/process_tree.h"
#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

// GPU 0: 16 GiB used; NVML lists pid 5200, gone from /proc, with no size;
// `live` (if any) is a live process of `live_bytes` beside it.
std::vector<Sample> gone_owner_without_size(
    size_t n, std::optional<uint64_t> live_bytes = std::nullopt) {
  Jitter j;
  return make_samples(n, 1.0, [&](size_t, Sample& s) {
    GpuSample g = idle_gpu(0, j);
    g.mem_used_bytes = 16 * kGiB;
    g.processes = std::vector<GpuProcess>{GpuProcess{5200, {}, "compute"}};
    ProcessSample gone;
    gone.pid = 5200;
    gone.state = "missing";
    s.processes.push_back(gone);
    if (live_bytes) {
      g.processes->push_back(GpuProcess{4242, *live_bytes, "compute"});
      s.processes.push_back(process(4242, "python"));
    }
    s.gpus.push_back(g);
  });
}

TEST(OrphanFigures, DeadOwnerWithoutSizeGivesUsedMinusLive) {
  auto r = run_diagnose(make_header(1), gone_owner_without_size(5));
  auto f = with_id(r, "orphaned-memory");
  ASSERT_EQ(f.size(), 1u);
  // who and the dashboard say 16.0 GiB is not owned: so does the finding.
  EXPECT_TRUE(contains(f[0].evidence,
                       "16.0 GiB used, 16.0 GiB of it not held by any live "
                       "process"))
      << f[0].evidence;
  // The owner's own figure is unknown, not 0.0 GiB.
  EXPECT_FALSE(contains(f[0].evidence, "0.0 GiB in")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence,
                       "pid 5200 (state missing, size not given by NVML, in "
                       "5 samples"))
      << f[0].evidence;
}

TEST(OrphanFigures, LiveProcessBesideTheDeadOneIsSubtracted) {
  auto r = run_diagnose(make_header(1), gone_owner_without_size(5, 6 * kGiB));
  auto f = with_id(r, "orphaned-memory");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(contains(f[0].evidence, "10.0 GiB of it not held by any live"))
      << f[0].evidence;
}

TEST(OrphanFigures, ModelFigureIsTheOneTheRuleGives) {
  auto samples = gone_owner_without_size(1, 6 * kGiB);
  const Sample& s = samples[0];
  MemoryOwners m = memory_owners(s.gpus[0], ProcessTree(s));
  ASSERT_TRUE(m.not_owned_bytes);
  EXPECT_EQ(*m.not_owned_bytes, 10 * kGiB);
  EXPECT_EQ(m.live_bytes, 6 * kGiB);
  EXPECT_EQ(m.dead_processes, 1);
}

TEST(OrphanFigures, LiveProcessOfUnknownSizeMakesTheFigureUnknown) {
  auto samples = gone_owner_without_size(1, 6 * kGiB);
  Sample& s = samples[0];
  (*s.gpus[0].processes)[1].used_bytes.reset();
  EXPECT_FALSE(memory_owners(s.gpus[0], ProcessTree(s)).not_owned_bytes);
}

}  // namespace
}  // namespace gd::test
