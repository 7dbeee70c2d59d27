// PciIndex: the GPU's NVML bus id against the forms the kernel prints.
#include <gtest/gtest.h>

#include "kernellog/kernel_log.h"
#include "kernellog/pci_address.h"

using gd::PciIndex;
using gd::kernellog::normalize_pci_address;

TEST(PciAddress, AllSpellingsOfOneDeviceNormaliseAlike) {
  for (const char* a :
       {"00000000:07:00.0", "0000:07:00.0", "0000:07:00", "07:00.0", "07:00",
        "PCI:0000:07:00", "  0000:07:00.0  "})
    EXPECT_EQ(normalize_pci_address(a), "0000:07:00") << a;
}

TEST(PciAddress, HexIsCaseInsensitive) {
  EXPECT_EQ(normalize_pci_address("00000000:CB:00.0"), "0000:cb:00");
  EXPECT_EQ(normalize_pci_address("0000:cb:00"), "0000:cb:00");
  EXPECT_EQ(normalize_pci_address("0000:10:1C"), "0000:10:1c");
}

TEST(PciAddress, NonZeroDomainsStayDistinct) {
  EXPECT_EQ(normalize_pci_address("00000018:01:00.0"), "0018:01:00");
  EXPECT_EQ(normalize_pci_address("0019:01:00"), "0019:01:00");
  EXPECT_EQ(normalize_pci_address("00010000:01:00.0"),
            "10000:01:00");  // VMD domains
}

TEST(PciAddress, RejectsWhatIsNotAnAddress) {
  for (const char* a :
       {"", "garbage", "0000:07", "07", "0000:07:00:00.0", "0000:xyz:00",
        "0000:07:00.x", "0000:07:20.0", "000000000:07:00.0"})
    EXPECT_FALSE(normalize_pci_address(a)) << a;
}

TEST(PciIndexTest, FindsGpuFromNvmlBusIdByKernelForm) {
  std::vector<gd::GpuInfo> gpus(2);
  gpus[0].index = 0;
  gpus[0].pci_bus_id = "00000000:07:00.0";
  gpus[1].index = 1;
  gpus[1].pci_bus_id = "00000000:CB:00.0";
  PciIndex pci(gpus);
  EXPECT_EQ(pci.find("0000:07:00"), 0);
  EXPECT_EQ(pci.find("0000:cb:00"), 1);
  EXPECT_EQ(pci.find("cb:00.0"), 1);
  EXPECT_FALSE(pci.find("0000:08:00"));
  EXPECT_FALSE(pci.find("0001:07:00")) << "other domain";
  EXPECT_FALSE(PciIndex().find("0000:07:00"));
}
