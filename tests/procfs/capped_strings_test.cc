// Per-process strings are capped where they are read: a process with a
// 1 MiB command line (or a huge cgroup path) costs at most ~4 KiB.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/text_cap.h"
#include "fixture_tree.h"
#include "procfs/host_source.h"
#include "procfs/process_files.h"
#include "procfs/text_util.h"

using gd::HostSource;
using gd::kProcessTextMax;
using gd::ProcessSample;
using gd::test::FixtureTree;

namespace {

constexpr size_t kMiB = 1 << 20;

// argv of `n` bytes in total: "python" then 'x' words, NUL-separated.
std::string huge_argv(size_t n) {
  std::string raw = std::string("python\0", 7);
  while (raw.size() < n) raw += std::string(1023, 'x') + '\0';
  raw.resize(n);
  return raw;
}

const ProcessSample* find_capped_pid(const std::vector<ProcessSample>& ps,
                                     uint32_t pid) {
  auto it = std::find_if(ps.begin(), ps.end(),
                         [&](const ProcessSample& p) { return p.pid == pid; });
  return it == ps.end() ? nullptr : &*it;
}

}  // namespace

TEST(CappedStrings, OneMiBCommandLineKeepsFourKiBAndSaysHowMuchWasCut) {
  FixtureTree tree;
  tree.write("proc/1000/cmdline", huge_argv(kMiB));
  HostSource c(tree.proc(), tree.sys());
  auto ps = c.processes({1000}, 10.0);
  const ProcessSample* p = find_capped_pid(ps, 1000);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->cmdline.starts_with("python xxx")) << p->cmdline.substr(0, 20);
  std::string marker =
      "…[truncated " + std::to_string(kMiB - kProcessTextMax) + " bytes]";
  EXPECT_TRUE(p->cmdline.ends_with(marker)) << p->cmdline.substr(4000);
  EXPECT_EQ(p->cmdline.size(), kProcessTextMax + marker.size());
}

TEST(CappedStrings, HugeCgroupPathIsCapped) {
  FixtureTree tree;
  tree.write("proc/1000/cgroup", "0::/" + std::string(64 * 1024, 'c') + "\n");
  HostSource c(tree.proc(), tree.sys());
  auto ps = c.processes({1000}, 10.0);
  const ProcessSample* p = find_capped_pid(ps, 1000);
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->cgroup);
  EXPECT_LT(p->cgroup->size(), kProcessTextMax + 64);
  EXPECT_NE(p->cgroup->find("…[truncated "), std::string::npos);
}

TEST(CappedStrings, ShortCommandLineIsUntouched) {
  FixtureTree tree;
  HostSource c(tree.proc(), tree.sys());
  auto ps = c.processes({1000}, 10.0);
  const ProcessSample* p = find_capped_pid(ps, 1000);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->cmdline, "python train.py --bs 256");
}

TEST(CappedStrings, PrefixReadHoldsOnlyThePrefix) {
  FixtureTree tree;
  tree.write("proc/1000/cmdline", huge_argv(kMiB));
  std::string out;
  size_t left_out = 0;
  ASSERT_TRUE(gd::procfs::read_file_prefix(
      (tree.proc() + "/1000/cmdline").c_str(), out, kProcessTextMax, left_out));
  EXPECT_EQ(out.size(), kProcessTextMax);
  EXPECT_EQ(left_out, kMiB - kProcessTextMax);
  EXPECT_LT(out.capacity(), 64u * 1024) << "the whole file was buffered";
}

TEST(CappedStrings, ReadCmdlineOfAMissingFileIsNullopt) {
  EXPECT_FALSE(gd::procfs::read_cmdline("/nonexistent/1/cmdline"));
}
