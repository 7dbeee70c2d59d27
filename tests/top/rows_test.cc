#include "views/top/rows.h"

#include <gtest/gtest.h>

#include "top_fixture.h"

namespace gd::top {
namespace {

using namespace test;

std::vector<uint32_t> pids(const std::vector<ProcRow>& rows) {
  std::vector<uint32_t> out;
  for (const auto& r : rows) out.push_back(r.key.pid);
  return out;
}

TEST(TopRows, DefaultIsGpuMemoryLargestFirstWithWorkersFolded) {
  Sample s = two_jobs();
  TopState st;
  auto rows = build_rows(s, st);
  EXPECT_EQ(pids(rows), (std::vector<uint32_t>{200, 100, 300}));
  const ProcRow& trainer = rows[1];
  EXPECT_EQ(trainer.workers, 2u);
  // Folded: the trainer's CPU includes its two workers.
  ASSERT_TRUE(trainer.cpu_pct);
  EXPECT_DOUBLE_EQ(*trainer.cpu_pct, 95 + 60 + 70);
  EXPECT_TRUE(rows[2].missing);
  EXPECT_EQ(rows[2].proc, nullptr);
}

TEST(TopRows, ReverseAndOtherColumns) {
  Sample s = two_jobs();
  TopState st;
  st.reverse = true;
  EXPECT_EQ(pids(build_rows(s, st)), (std::vector<uint32_t>{300, 100, 200}));
  st.reverse = false;
  st.sort = Column::kPid;
  EXPECT_EQ(pids(build_rows(s, st)), (std::vector<uint32_t>{100, 200, 300}));
  st.sort = Column::kCpu;  // unknown (the vanished pid) last either way
  EXPECT_EQ(pids(build_rows(s, st)), (std::vector<uint32_t>{100, 200, 300}));
  st.reverse = true;
  EXPECT_EQ(pids(build_rows(s, st)), (std::vector<uint32_t>{200, 100, 300}));
  st = {};
  st.sort = Column::kUser;
  EXPECT_EQ(pids(build_rows(s, st)), (std::vector<uint32_t>{100, 200, 300}));
}

TEST(TopRows, SmColumnIsNvmlsPerProcessUtilisation) {
  Sample s = two_jobs();
  (*s.gpus[0].processes)[0].sm_util_pct = 35;  // pid 100
  (*s.gpus[1].processes)[0].sm_util_pct = 80;  // pid 200; 300 not sampled
  TopState st;
  st.sort = Column::kSm;  // largest first, unknown last
  auto rows = build_rows(s, st);
  EXPECT_EQ(pids(rows), (std::vector<uint32_t>{200, 100, 300}));
  ASSERT_TRUE(rows[0].sm_pct);
  EXPECT_DOUBLE_EQ(*rows[0].sm_pct, 80);
  EXPECT_FALSE(rows[2].sm_pct);
  st.reverse = true;
  EXPECT_EQ(pids(build_rows(s, st)), (std::vector<uint32_t>{100, 200, 300}));
}

TEST(TopRows, TreeShowsEachWorkerUnderItsProcessWithItsOwnCpu) {
  Sample s = two_jobs();
  TopState st;
  st.tree = true;
  auto rows = build_rows(s, st);
  EXPECT_EQ(pids(rows), (std::vector<uint32_t>{200, 100, 101, 102, 300}));
  EXPECT_DOUBLE_EQ(*rows[1].cpu_pct, 95);
  EXPECT_EQ(rows[2].depth, 1);
  EXPECT_EQ(rows[2].owner, 100u);
  EXPECT_FALSE(rows[2].last_sibling);
  EXPECT_TRUE(rows[3].last_sibling);
}

TEST(TopRows, FiltersByUserGpuAndText) {
  Sample s = two_jobs();
  TopState st;
  st.user_filter = "alice";
  EXPECT_EQ(pids(build_rows(s, st)), (std::vector<uint32_t>{100}));
  st = {};
  st.gpu_filter = 1;
  EXPECT_EQ(pids(build_rows(s, st)), (std::vector<uint32_t>{200, 300}));
  st = {};
  st.text_filter = "FINETUNE";  // case-insensitive, in the command line
  EXPECT_EQ(pids(build_rows(s, st)), (std::vector<uint32_t>{200}));
  st.text_filter = "10";  // a pid
  EXPECT_EQ(pids(build_rows(s, st)), (std::vector<uint32_t>{100}));
}

// The bar's hatched part is the memory no live process holds: used minus
// the live processes (model/memory_owners.h), the figure of the finding,
// who and the dashboard.
TEST(TopRows, MemorySplitCountsMemoryOfGoneAndZombieOwners) {
  TraceHeader h = header_with(2);
  Sample s = two_jobs();
  MemorySplit m1 = memory_split(h, s, 1);
  EXPECT_EQ(*m1.used, 46 * kGiB);
  EXPECT_EQ(*m1.total, 80 * kGiB);
  EXPECT_EQ(m1.orphaned, 6 * kGiB);  // the gone pid's 5 GiB and 1 GiB more
  EXPECT_EQ(memory_split(h, s, 0).orphaned, 1 * kGiB);
  s.processes[0].state = "Z";
  EXPECT_EQ(memory_split(h, s, 0).orphaned, 21 * kGiB);
}

// NVML lists the gone owner without a size: its memory is still memory no
// live process holds (the bar showed none of it).
TEST(TopRows, MemorySplitCountsAGoneOwnerWithoutASize) {
  TraceHeader h = header_with(2);
  Sample s = two_jobs();
  (*s.gpus[1].processes)[1].used_bytes.reset();  // pid 300, gone
  EXPECT_EQ(memory_split(h, s, 1).orphaned, 6 * kGiB);
}

TEST(TopRows, UsersOfGpuProcesses) {
  EXPECT_EQ(users_of(two_jobs()), (std::vector<std::string>{"alice", "bob"}));
}

}  // namespace
}  // namespace gd::top
