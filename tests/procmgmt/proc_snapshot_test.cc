#include "procmgmt/proc_snapshot.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixture_proc.h"

namespace gd::procmgmt {
namespace {

using ::testing::ElementsAre;

class ProcSnapshotTest : public ::testing::Test {
 protected:
  test::FixtureProc fx;
  ProcSnapshot snap = ProcSnapshot::read(fx.proc());
};

TEST_F(ProcSnapshotTest, ReadsEveryProcessWithItsFields) {
  EXPECT_EQ(snap.entries().size(), 17u);
  const ProcEntry* rank = snap.find(1001);
  ASSERT_NE(rank, nullptr);
  EXPECT_EQ(rank->ppid, 1000u);
  EXPECT_EQ(rank->state, 'R');
  EXPECT_EQ(rank->uid, 1000u);
  EXPECT_EQ(rank->user, user_name_of(1000));
  EXPECT_EQ(rank->comm, "python3");
  EXPECT_EQ(rank->cmdline, "/usr/bin/python3 -u train.py --local-rank=0");
  EXPECT_EQ(rank->starttime, 2100u);
  EXPECT_EQ(rank->cgroup, "/user.slice/user-1000.slice/session-3.scope");
  EXPECT_THAT(rank->nspid, ElementsAre(1001u));
  EXPECT_FALSE(rank->in_nested_pid_namespace());
  EXPECT_EQ(snap.find(9999), nullptr);
}

TEST_F(ProcSnapshotTest, NestedPidNamespaceFromNSpid) {
  const ProcEntry* pod = snap.find(4001);
  ASSERT_NE(pod, nullptr);
  EXPECT_THAT(pod->nspid, ElementsAre(4001u, 1u));
  EXPECT_TRUE(pod->in_nested_pid_namespace());
}

TEST_F(ProcSnapshotTest, KernelThreadsAndZombies) {
  EXPECT_TRUE(snap.find(2)->kernel_thread());
  EXPECT_TRUE(snap.find(50)->kernel_thread());
  EXPECT_FALSE(snap.find(1)->kernel_thread());
  // A zombie has no command line either, but it is a user process.
  const ProcEntry* z = snap.find(2001);
  EXPECT_TRUE(z->zombie());
  EXPECT_FALSE(z->kernel_thread());
  EXPECT_EQ(z->command(), "[python3]");
  EXPECT_TRUE(snap.find(3000)->uninterruptible());
}

TEST_F(ProcSnapshotTest, TreeLinks) {
  EXPECT_THAT(snap.children(1000), ElementsAre(1001u, 1002u));
  EXPECT_THAT(snap.descendants(1000), ElementsAre(1001u, 1011u, 1012u, 1002u));
  EXPECT_THAT(snap.ancestors(1012), ElementsAre(1011u, 1001u, 1000u, 900u, 1u));
  EXPECT_TRUE(snap.is_ancestor(900, 6000));
  EXPECT_FALSE(snap.is_ancestor(1000, 6000));
  EXPECT_TRUE(snap.descendants(7000).empty());
}

TEST(ProcSnapshotCycle, CorruptParentLinksTerminate) {
  ProcEntry a, b;
  a.pid = 10;
  a.ppid = 11;
  b.pid = 11;
  b.ppid = 10;
  auto snap = ProcSnapshot::from_entries({a, b});
  EXPECT_THAT(snap.ancestors(10), ElementsAre(11u));
  EXPECT_THAT(snap.descendants(10), ElementsAre(11u));
}

TEST(ParseNspid, AbsentLineAndValues) {
  EXPECT_TRUE(parse_nspid("Name:\tx\nPid:\t5\n").empty());
  EXPECT_THAT(parse_nspid("Name:\tx\nNSpid:\t4242\t17\t1\n"),
              ElementsAre(4242u, 17u, 1u));
}

TEST(ReadProcEntry, MissingOrGarbageIsNullopt) {
  test::FixtureProc fx;
  EXPECT_FALSE(read_proc_entry(fx.proc(), 9999));
  std::FILE* f = std::fopen((fx.proc() + "/7000/stat").c_str(), "w");
  std::fputs("7000 (vim S 1", f);  // truncated
  std::fclose(f);
  EXPECT_FALSE(read_proc_entry(fx.proc(), 7000));
}

}  // namespace
}  // namespace gd::procmgmt
