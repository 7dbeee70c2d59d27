// A GPU by the names users and schedulers give it.
#include "model/gpu_lookup.h"

#include <gtest/gtest.h>

namespace gd {
namespace {

TraceHeader two_gpus() {
  TraceHeader h;
  h.gpus.resize(2);
  h.gpus[0].index = 0;
  h.gpus[0].uuid = "GPU-aaaa-0000";
  h.gpus[0].minor_number = 2;  // /dev/nvidia2: minor numbers need not be
  h.gpus[1].index = 1;         // the indexes
  h.gpus[1].uuid = "GPU-bbbb-1111";
  h.gpus[1].minor_number = 0;
  h.gpus[0].pci_bus_id = "00000000:07:00.0";  // as NVML writes it
  h.gpus[1].pci_bus_id = "00000000:1A:00.0";
  return h;
}

TEST(GpuByName, IndexUuidAndDeviceFile) {
  const TraceHeader h = two_gpus();
  EXPECT_EQ(gpu_by_name(h, "1"), 1);
  EXPECT_EQ(gpu_by_name(h, "gpu-BBBB-1111"), 1);
  EXPECT_EQ(gpu_by_name(h, "/dev/nvidia2"), 0);
  EXPECT_EQ(gpu_by_name(h, "/dev/nvidia0"), 1);
  EXPECT_EQ(gpu_by_name(h, "2"), std::nullopt);
  EXPECT_EQ(gpu_by_name(h, "/dev/nvidia1"), std::nullopt);
  EXPECT_EQ(gpu_by_name(h, "/dev/nvidiactl"), std::nullopt);
  EXPECT_EQ(gpu_by_name(h, "GPU-cccc"), std::nullopt);
}

TEST(GpuByName, PciAddressInEveryFormToolsWriteIt) {
  const TraceHeader h = two_gpus();
  EXPECT_EQ(gpu_by_name(h, "00000000:1A:00.0"), 1);  // nvidia-smi
  EXPECT_EQ(gpu_by_name(h, "0000:1a:00.0"), 1);      // lspci -D, sysfs
  EXPECT_EQ(gpu_by_name(h, "1a:00.0"), 1);           // lspci
  EXPECT_EQ(gpu_by_name(h, "0000:07:00.0"), 0);
  EXPECT_EQ(gpu_by_name(h, "0000:07:00.1"), std::nullopt);  // its audio
  EXPECT_EQ(gpu_by_name(h, "0001:1a:00.0"), std::nullopt);  // other domain
  EXPECT_EQ(gpu_index_of("3"), 3);
  EXPECT_EQ(gpu_index_of("0000:07:00.0"), std::nullopt);
}

TEST(GpuByName, WithoutMinorNumbersNoDeviceFileMatches) {
  TraceHeader h = two_gpus();
  for (auto& g : h.gpus) g.minor_number.reset();
  EXPECT_EQ(gpu_by_name(h, "/dev/nvidia0"), std::nullopt);
}

TEST(CheckGpuName, ShapesAndOneLineWhy) {
  for (const char* ok : {"0", "17", "GPU-8f1c", "gpu-x1", "/dev/nvidia3",
                         "0000:1a:00.0", "1A:00.0", "00000000:07:00.0"})
    EXPECT_EQ(check_gpu_name(ok), "") << ok;
  for (const char* bad :
       {"", "x", "-1", "12345", "GPU-", "/dev/nvidia", "/dev/nvidiactl",
        "/dev/nvidia1x", "/dev/sda", "zz:00.0", "1a:00:00:00.0"}) {
    std::string why = check_gpu_name(bad);
    EXPECT_NE(why, "") << bad;
    EXPECT_EQ(why.find('\n'), std::string::npos);
  }
  EXPECT_LE(check_gpu_name(std::string(500, 'z')).size(), 200u);
}

}  // namespace
}  // namespace gd
