#include "procfs/pid_listing.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace gd::procfs {
namespace {

namespace fs = std::filesystem;

// A /proc look-alike: pid directories beside entries that only look like
// pids (a leading zero, a sign, too big for a pid, letters) and files.
class FakeProcRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("gd_pid_listing_" + std::to_string(getpid()));
    fs::remove_all(root_);
    for (const char* d :
         {"1", "42", "7", "0", "042", "-3", "4294967296", "self", "sys", "12a"})
      fs::create_directories(root_ / d);
    std::ofstream(root_ / "99") << "a file named like a pid is still listed";
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(FakeProcRoot, ListsPidEntriesAscendingAndNothingElse) {
  EXPECT_EQ(list_pids(root_.string()), (std::vector<uint32_t>{1, 7, 42, 99}));
}

TEST_F(FakeProcRoot, ForEachPidSeesTheSamePids) {
  std::vector<uint32_t> seen;
  EXPECT_TRUE(
      for_each_pid(root_.string(), [&](uint32_t pid) { seen.push_back(pid); }));
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<uint32_t>{1, 7, 42, 99}));
}

TEST(PidListing, AMissingRootIsEmptyAndSaysSo) {
  bool called = false;
  EXPECT_FALSE(
      for_each_pid("/nonexistent/proc", [&](uint32_t) { called = true; }));
  EXPECT_FALSE(called);
  EXPECT_TRUE(list_pids("/nonexistent/proc").empty());
}

TEST(PidListing, ThisMachineListsThisProcess) {
  auto pids = list_pids("/proc");
  EXPECT_TRUE(std::binary_search(pids.begin(), pids.end(),
                                 static_cast<uint32_t>(getpid())));
}

}  // namespace
}  // namespace gd::procfs
