#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fixture_proc.h"
#include "views/job_tree_view.h"

namespace gd::procmgmt {
namespace {

ProcessSample ps(uint32_t pid, uint32_t ppid, const std::string& cmd,
                 double cpu, const std::string& state = "R") {
  ProcessSample p;
  p.pid = pid;
  p.ppid = ppid;
  p.cmdline = cmd;
  p.name = "python3";
  p.cpu_pct = cpu;
  p.state = state;
  p.user = "alice";
  return p;
}

TEST(JobTree, LauncherRanksWorkers) {
  test::FixtureProc fx;
  auto procs = ProcSnapshot::read(fx.proc());
  Sample s;
  s.processes = {ps(1001, 1000, "python3 train.py --local-rank=0", 99),
                 ps(1002, 1000, "python3 train.py --local-rank=1", 98),
                 ps(1011, 1001, "python3 worker", 80),
                 ps(1012, 1011, "python3 worker2", 10),
                 ps(3000, 1, "python3 stuck.py", 0, "D")};
  // 1011 also made a CUDA context: it stays a worker of 1001, not a rank.
  std::vector<TreeRank> ranks = {{1001, {0}, 30ull << 30},
                                 {1011, {0}, 1ull << 30},
                                 {1002, {1}, 31ull << 30},
                                 {3000, {2}, 2ull << 30}};
  auto trees = build_job_trees(s, ranks, procs);
  ASSERT_EQ(trees.size(), 2u);
  ASSERT_TRUE(trees[0].launcher);
  EXPECT_EQ(trees[0].launcher->pid, 1000u);
  ASSERT_EQ(trees[0].ranks.size(), 2u);
  EXPECT_EQ(trees[0].ranks[0].rank.pid, 1001u);
  ASSERT_EQ(trees[0].ranks[0].workers.size(), 2u);
  EXPECT_EQ(trees[0].ranks[0].workers[0].first->pid, 1011u);
  EXPECT_EQ(trees[0].ranks[0].workers[0].second, 1);
  EXPECT_EQ(trees[0].ranks[0].workers[1].first->pid, 1012u);
  EXPECT_EQ(trees[0].ranks[0].workers[1].second, 2);
  EXPECT_EQ(trees[0].ranks[1].rank.pid, 1002u);
  EXPECT_FALSE(trees[1].launcher);
  EXPECT_EQ(trees[1].ranks[0].rank.pid, 3000u);

  std::string text = render_job_trees(s, trees);
  EXPECT_NE(text.find("launcher 1000"), std::string::npos) << text;
  EXPECT_NE(text.find("(2 ranks)"), std::string::npos) << text;
  EXPECT_NE(text.find("|- rank 1001  GPU 0  30.0 GiB"), std::string::npos)
      << text;
  EXPECT_NE(text.find("`- rank 1002  GPU 1"), std::string::npos) << text;
  EXPECT_NE(text.find("`- worker 1011"), std::string::npos) << text;

  auto j = nlohmann::json::parse(job_trees_to_json(s, trees));
  EXPECT_EQ(j["jobs"][0]["launcher"]["pid"], 1000);
  EXPECT_EQ(j["jobs"][0]["ranks"][0]["workers"][1]["depth"], 2);
  EXPECT_TRUE(j["jobs"][1]["launcher"].is_null());
}

TEST(JobTree, MissingRankHasNoLauncherLookup) {
  ProcSnapshot empty;
  Sample s;
  ProcessSample gone;
  gone.pid = 4242;
  gone.state = "missing";
  s.processes = {gone};
  auto trees = build_job_trees(s, {{4242, {0}, 1ull << 30}}, empty);
  ASSERT_EQ(trees.size(), 1u);
  EXPECT_EQ(trees[0].ranks[0].proc, nullptr);
  EXPECT_NE(render_job_trees(s, trees).find("missing"), std::string::npos);
}

}  // namespace
}  // namespace gd::procmgmt
