// A fleet's accounts: users and containers are one row over every node, a
// job is its node's unless Slurm names it, every GPU keeps its node and its
// own closing figures.
#include "accounting/fleet_merge.h"

#include <gtest/gtest.h>

namespace gd::accounting {
namespace {

GroupRow row(const std::string& key, const std::string& label, double held_s,
             double energy_j) {
  GroupRow r;
  r.key = key;
  r.label = label;
  r.usage.held_s = held_s;
  r.usage.energy_j = energy_j;
  r.gpu_mask = 0b11;
  r.first_t = 100;
  r.last_t = 200;
  return r;
}

AccountReport node_report(double start, double held_s) {
  AccountReport r;
  r.start = start;
  r.end = start + 3600;
  r.samples = 240;
  GpuAccount g;
  g.index = 0;
  g.wall_s = 3600;
  g.held_s = held_s;
  g.unheld_s = 3600 - held_s;
  r.gpus = {g};
  r.groups[static_cast<int>(Dimension::kJob)] = {
      row("pid:42", "python (pid 42)", held_s, 10),
      row("slurm:7", "slurm 7", 60, 1)};
  r.groups[static_cast<int>(Dimension::kUser)] = {
      row("u:alice", "alice", held_s, 11)};
  r.total.held_s = held_s + 60;
  return r;
}

TEST(FleetMerge, UsersAcrossNodesJobsByNodeSlurmAcrossNodes) {
  std::vector<NodeAccount> nodes;
  nodes.push_back({"n1", node_report(1000, 600)});
  nodes.push_back({"n2", node_report(900, 1200)});
  AccountReport r = merge_node_reports(std::move(nodes));
  EXPECT_EQ(r.start, 900);
  EXPECT_EQ(r.end, 1000 + 3600);
  EXPECT_EQ(r.samples, 480u);
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.gpus[0].node, "n1");
  EXPECT_EQ(r.gpus[1].node, "n2");
  EXPECT_EQ(r.gpus[1].held_s + r.gpus[1].unheld_s, r.gpus[1].wall_s);
  EXPECT_EQ(r.total.held_s, 600 + 60 + 1200 + 60);

  const auto& users = r.by(Dimension::kUser);
  ASSERT_EQ(users.size(), 1u);
  EXPECT_EQ(users[0].key, "u:alice");
  EXPECT_EQ(users[0].usage.held_s, 1800);
  EXPECT_EQ(users[0].usage.energy_j, 22);
  EXPECT_EQ(users[0].nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(users[0].node_count, 2u);
  EXPECT_EQ(users[0].gpu_mask, 0u);  // indices of two nodes name nothing

  const auto& jobs = r.by(Dimension::kJob);
  ASSERT_EQ(jobs.size(), 3u);           // pid:42 on each node, one Slurm job
  EXPECT_EQ(jobs[0].key, "n2/pid:42");  // the most held first
  EXPECT_EQ(jobs[0].label, "n2: python (pid 42)");
  EXPECT_EQ(jobs[0].nodes, std::vector<std::string>{"n2"});
  EXPECT_EQ(jobs[1].key, "n1/pid:42");
  EXPECT_EQ(jobs[2].key, "slurm:7");
  EXPECT_EQ(jobs[2].usage.held_s, 120);
  EXPECT_EQ(jobs[2].node_count, 2u);
}

TEST(FleetMerge, FoldedRowsStayOneOtherRowLast) {
  std::vector<NodeAccount> nodes;
  for (const char* n : {"a", "b"}) {
    AccountReport r = node_report(0, 100);
    GroupRow other = row("other", "other", 5, 1);
    other.folded = true;
    r.groups[static_cast<int>(Dimension::kUser)].push_back(other);
    r.groups_folded[static_cast<int>(Dimension::kUser)] = 3;
    nodes.push_back({n, r});
  }
  AccountReport r = merge_node_reports(std::move(nodes));
  const auto& users = r.by(Dimension::kUser);
  ASSERT_EQ(users.size(), 2u);
  EXPECT_FALSE(users[0].folded);
  EXPECT_TRUE(users[1].folded);
  EXPECT_EQ(users[1].usage.held_s, 10);
  EXPECT_EQ(r.groups_folded[static_cast<int>(Dimension::kUser)], 6u);
}

TEST(FleetMerge, NoNodeNoRows) {
  AccountReport r = merge_node_reports({});
  EXPECT_EQ(r.samples, 0u);
  EXPECT_TRUE(r.gpus.empty());
  EXPECT_TRUE(r.by(Dimension::kJob).empty());
}

}  // namespace
}  // namespace gd::accounting
