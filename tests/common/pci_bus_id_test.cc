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

// The kernel prints a device without its function ("PCI:0000:07:00").
TEST(CanonicalPciDevice, AllSpellingsOfOneDeviceNormaliseAlike) {
  for (const char* a :
       {"00000000:07:00.0", "0000:07:00.0", "0000:07:00", "07:00.0", "07:00",
        "PCI:0000:07:00", "  0000:07:00.0  "})
    EXPECT_EQ(canonical_pci_device(a), "0000:07:00") << a;
}

TEST(CanonicalPciDevice, HexIsCaseInsensitive) {
  EXPECT_EQ(canonical_pci_device("00000000:CB:00.0"), "0000:cb:00");
  EXPECT_EQ(canonical_pci_device("0000:cb:00"), "0000:cb:00");
  EXPECT_EQ(canonical_pci_device("0000:10:1C"), "0000:10:1c");
}

TEST(CanonicalPciDevice, NonZeroDomainsStayDistinct) {
  EXPECT_EQ(canonical_pci_device("00000018:01:00.0"), "0018:01:00");
  EXPECT_EQ(canonical_pci_device("0019:01:00"), "0019:01:00");
  EXPECT_EQ(canonical_pci_device("00010000:01:00.0"),
            "10000:01:00");  // VMD domains
}

TEST(CanonicalPciDevice, RejectsWhatIsNotAnAddress) {
  for (const char* a :
       {"", "garbage", "0000:07", "07", "0000:07:00:00.0", "0000:xyz:00",
        "0000:07:00.x", "0000:07:20.0", "000000000:07:00.0"})
    EXPECT_FALSE(canonical_pci_device(a)) << a;
}

}  // namespace gd
