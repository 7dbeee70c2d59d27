// PciIndex: the GPU's NVML bus id against the forms the kernel prints.
#include <gtest/gtest.h>

#include "kernellog/kernel_log.h"

using gd::PciIndex;

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
