#include "common/pci_bus_id.h"

#include <gtest/gtest.h>

namespace gd {

TEST(CanonicalPciBusId, NvmlCudaAndSysfsFormsAreOneAddress) {
  EXPECT_EQ(canonical_pci_bus_id("00000000:07:00.0"), "0000:07:00.0");  // NVML
  EXPECT_EQ(canonical_pci_bus_id("0000:4E:00.0"), "0000:4e:00.0");      // CUDA
  EXPECT_EQ(canonical_pci_bus_id("0000:4e:00.0"), "0000:4e:00.0");      // sysfs
  EXPECT_EQ(canonical_pci_bus_id("07:00.0"), "0000:07:00.0");
  EXPECT_EQ(canonical_pci_bus_id("0000:07:00"), "0000:07:00.0");
  EXPECT_EQ(canonical_pci_bus_id("00010000:c1:1f.7"), "10000:c1:1f.7");
}

TEST(CanonicalPciBusId, RejectsWhatIsNotAnAddress) {
  for (const char* bad :
       {"", "gpu0", "0000:07:00.8", "0000:07:20.0", "0000:107:00.0",
        "0000:07:00.0.1", "000000000:07:00.0", "12:34:56:78", ":07:00.0",
        "0000::00.0", "0000:07:00."})
    EXPECT_EQ(canonical_pci_bus_id(bad), std::nullopt) << bad;
}

}  // namespace gd
