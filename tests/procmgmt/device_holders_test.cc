#include "procmgmt/device_holders.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixture_proc.h"

namespace gd::procmgmt {
namespace {

using ::testing::ElementsAre;

TEST(NvidiaDeviceName, OnlyNodesUnderThePrefix) {
  EXPECT_EQ(nvidia_device_name("/dev/nvidia0", "/dev"), "nvidia0");
  EXPECT_EQ(nvidia_device_name("/dev/nvidiactl", "/dev/"), "nvidiactl");
  EXPECT_EQ(nvidia_device_name("/dev/nvidia-uvm", "/dev"), "nvidia-uvm");
  EXPECT_EQ(nvidia_device_name("/dev/nvme0n1", "/dev"), "");
  EXPECT_EQ(nvidia_device_name("/devx/nvidia0", "/dev"), "");
  EXPECT_EQ(nvidia_device_name("/tmp/fake/nvidia3", "/tmp/fake"), "nvidia3");
  EXPECT_EQ(nvidia_device_name("/tmp/fake/nvidia3 (deleted)", "/tmp/fake"), "");
}

class DeviceHoldersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fx.open_fd(1001, 3, "/dev/nvidia0");
    fx.open_fd(1001, 4, "/dev/nvidiactl");
    fx.open_fd(1001, 5, "/dev/nvidia-uvm");
    fx.open_fd(1001, 6, "/dev/nvidia0");  // the same node twice
    fx.open_fd(4001, 7, "/dev/nvidiactl");
    fx.open_fd(5000, 3, "/dev/nvidia1");
    fx.open_fd(7000, 0, "/dev/pts/1");
    fx.open_fd(7000, 1, "socket:[12345]");
  }
  test::FixtureProc fx;
};

TEST_F(DeviceHoldersTest, FindsEveryHolderOnce) {
  DeviceScan scan = scan_device_holders(fx.proc(), "/dev");
  ASSERT_EQ(scan.holders.size(), 3u);
  EXPECT_EQ(scan.holders[0].pid, 1001u);
  EXPECT_THAT(scan.holders[0].devices,
              ElementsAre("nvidia-uvm", "nvidia0", "nvidiactl"));
  EXPECT_TRUE(scan.holders[0].holds_gpu(0));
  EXPECT_FALSE(scan.holders[0].holds_gpu(1));
  EXPECT_FALSE(scan.holders[0].gpu_unknown());
  EXPECT_EQ(scan.holders[1].pid, 4001u);
  EXPECT_TRUE(scan.holders[1].gpu_unknown());
  EXPECT_EQ(scan.holders[2].pid, 5000u);
  EXPECT_TRUE(scan.holders[2].holds_gpu(1));
}

TEST_F(DeviceHoldersTest, PrefixIsOverridable) {
  EXPECT_TRUE(scan_device_holders(fx.proc(), "/tmp/elsewhere").holders.empty());
  fx.open_fd(3000, 9, "/tmp/elsewhere/nvidia2");
  DeviceScan scan = scan_device_holders(fx.proc(), "/tmp/elsewhere");
  ASSERT_EQ(scan.holders.size(), 1u);
  EXPECT_EQ(scan.holders[0].pid, 3000u);
  EXPECT_TRUE(scan.holders[0].holds_gpu(2));
}

}  // namespace
}  // namespace gd::procmgmt
