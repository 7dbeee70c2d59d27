// The PCI scan for pci_gpus and the kernel-module version file, on fake
// /sys and /proc trees built the way the kernel lays them out.
#include "procfs/pci_gpus.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "procfs/nvidia_version.h"

namespace fs = std::filesystem;

namespace {

class FakeRoot {
 public:
  FakeRoot() {
    char tmpl[] = "/tmp/gd_pci_gpus_XXXXXX";
    root_ = mkdtemp(tmpl);
  }
  ~FakeRoot() { fs::remove_all(root_); }
  FakeRoot(const FakeRoot&) = delete;
  FakeRoot& operator=(const FakeRoot&) = delete;

  std::string sys() const { return root_ + "/sys"; }
  std::string proc() const { return root_ + "/proc"; }

  // A PCI function at `tree_path` below /sys/devices ("pci0000:00/
  // 0000:00:03.1/0000:03:00.0"), listed in /sys/bus/pci/devices, bound to
  // `driver` unless it is empty.
  void device(const std::string& tree_path, const std::string& vendor,
              const std::string& cls, const std::string& driver = "") const {
    const fs::path dev = fs::path(sys()) / "devices" / tree_path;
    fs::create_directories(dev);
    std::ofstream(dev / "vendor") << vendor << "\n";
    std::ofstream(dev / "class") << cls << "\n";
    const fs::path bus = fs::path(sys()) / "bus/pci/devices";
    fs::create_directories(bus);
    const std::string name = dev.filename();
    fs::create_directory_symlink("../../../devices/" + tree_path, bus / name);
    if (!driver.empty()) {
      fs::create_directories(fs::path(sys()) / "bus/pci/drivers" / driver);
      // From devices/<tree_path>/ back up to the /sys root.
      fs::path up;
      for ([[maybe_unused]] const auto& part : fs::path(tree_path)) up /= "..";
      fs::create_directory_symlink(
          fs::path("..") / up / "bus/pci/drivers" / driver, dev / "driver");
    }
  }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((fs::path(root_) / rel).parent_path());
    std::ofstream(fs::path(root_) / rel) << text;
  }

 private:
  std::string root_;
};

}  // namespace

TEST(PciGpus, NvidiaDisplayFunctionsWithTheirDriverAndPort) {
  FakeRoot r;
  r.device("pci0000:00/0000:00:03.1/0000:03:00.0", "0x10de", "0x030200",
           "nvidia");
  r.device("pci0000:00/0000:00:03.1/0000:03:00.1", "0x10de", "0x040300",
           "snd_hda_intel");  // the GPU's audio function
  r.device("pci0000:00/0000:00:02.0/0000:02:00.0", "0x10de", "0x030000",
           "vfio-pci");
  r.device("pci0000:00/0000:00:04.0/0000:04:00.0", "0x10de", "0x030200");
  r.device("pci0000:00/0000:00:06.0", "0x1a03", "0x030000", "ast");  // BMC
  r.device("pci0000:00/0000:00:1f.0", "0x8086", "0x060100", "lpc_ich");
  r.device("pci0000:00/0000:00:05.0", "0x10de", "0x030000", "nvidia");
  r.device("pci0000:00/0000:00:07.0/0000:08:00.0", "0x10de", "0x068000",
           "nvidia-nvswitch");  // an NVSwitch is a bridge, not a GPU

  auto found = gd::procfs::scan_pci_gpus(r.sys());
  ASSERT_TRUE(found);
  const auto& gpus = *found;
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_EQ(gpus[0].gpu.address, "0000:00:05.0");
  EXPECT_EQ(gpus[0].gpu.driver, "nvidia");
  EXPECT_EQ(gpus[0].upstream_port, "") << "on the root bus itself";
  EXPECT_EQ(gpus[1].gpu.address, "0000:02:00.0");
  EXPECT_EQ(gpus[1].gpu.driver, "vfio-pci");
  EXPECT_EQ(gpus[1].upstream_port, "0000:00:02.0");
  EXPECT_EQ(gpus[2].gpu.address, "0000:03:00.0");
  EXPECT_EQ(gpus[2].gpu.driver, "nvidia");
  EXPECT_EQ(gpus[2].upstream_port, "0000:00:03.1");
  EXPECT_EQ(gpus[3].gpu.address, "0000:04:00.0");
  EXPECT_FALSE(gpus[3].gpu.driver) << "bound to nothing";
  EXPECT_EQ(gpus[3].upstream_port, "0000:00:04.0");
}

TEST(PciGpus, NoPciDirectoryIsNotLookedNotNoGpus) {
  FakeRoot r;
  EXPECT_FALSE(gd::procfs::scan_pci_gpus(r.sys()));
  r.write("sys/bus/pci/devices/.keep", "");
  auto none = gd::procfs::scan_pci_gpus(r.sys());
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST(NvidiaVersion, ProprietaryAndOpenModuleFiles) {
  // https://github.com/dylanaraps/neofetch/issues/876
  EXPECT_EQ(gd::procfs::parse_nvidia_version(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  384.98  Thu "
                "Oct 26 15:16:01 PDT 2017\nGCC version:  gcc version 7.2.0 "
                "(Ubuntu 7.2.0-8ubuntu3) \n"),
            "384.98");
  // https://github.com/nix-community/nixGL/issues/186
  EXPECT_EQ(gd::procfs::parse_nvidia_version(
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                "565.57.01  Release Build  (dvs-builder@U16-A24-9-2)  Thu Oct "
                "10 12:15:00 UTC 2024\nGCC version:  gcc version 13.3.0 "
                "(Ubuntu 13.3.0-6ubuntu2~24.04)\n"),
            "565.57.01");
  EXPECT_FALSE(gd::procfs::parse_nvidia_version(""));
  EXPECT_FALSE(gd::procfs::parse_nvidia_version("GCC version:  gcc 12\n"));
  EXPECT_FALSE(gd::procfs::parse_nvidia_version(
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  [...]\n"));
}

TEST(NvidiaVersion, ReadFromTheProcRootAndAbsentWhenNoModule) {
  FakeRoot r;
  EXPECT_FALSE(gd::procfs::read_nvidia_kernel_module_version(r.proc()));
  // https://github.com/nix-community/nixGL/issues/121
  r.write("proc/driver/nvidia/version",
          "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  525.60.11 "
          " Release Build  (archlinux-builder@localhost)  \nGCC version:  gcc "
          "version 12.2.0 (GCC) \n");
  EXPECT_EQ(gd::procfs::read_nvidia_kernel_module_version(r.proc()),
            "525.60.11");
}
