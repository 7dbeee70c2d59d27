// gpu-missing: a GPU on the PCI bus that NVML does not list, or one that
// drops out of NVML's enumeration; never a passed-through one.
#include <gtest/gtest.h>

#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

std::vector<Sample> two_busy_gpus(size_t n = 60) {
  Jitter j;
  return make_samples(n, 1.0, [&](size_t, Sample& s) {
    s.gpus.push_back(busy_gpu(0, j));
    s.gpus.push_back(busy_gpu(1, j));
  });
}

TEST(GpuMissing, SysfsAndNvmlAddressFormatsMatch) {
  auto h = make_header(2);  // NVML: 00000000:07:00.0, 00000000:08:00.0
  h.gpus[1].pci_bus_id = "00000000:0A:00.0";
  h.pci_gpus = std::vector<PciGpu>{{"0000:07:00.0", std::string("nvidia")},
                                   {"0000:0a:00.0", std::string("nvidia")}};
  EXPECT_TRUE(with_id(run_diagnose(h, two_busy_gpus()), "gpu-missing").empty());
}

TEST(GpuMissing, UnboundGpuNamesAddressAndItsDriverLine) {
  auto h = make_header(2);
  h.pci_gpus = std::vector<PciGpu>{{"0000:07:00.0", std::string("nvidia")},
                                   {"0000:08:00.0", std::string("nvidia")},
                                   {"0000:C7:00.0", std::nullopt}};
  auto samples = two_busy_gpus();
  Event e;
  e.kind = kEventNvrm;
  e.pci_address = "0000:c7:00.0";
  e.text = "NVRM: GPU 0000:c7:00.0: RmInitAdapter failed! (0x23:0x56:515)";
  samples[0].events.push_back(e);
  auto f = with_id(run_diagnose(h, samples), "gpu-missing");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "critical");
  EXPECT_TRUE(contains(f[0].evidence, "0000:C7:00.0 (bound to no driver)"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "NVML enumerates 2 GPUs"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "RmInitAdapter failed")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "lspci -s 0000:C7:00.0 -vv"))
      << f[0].action;
  EXPECT_TRUE(contains(f[0].action, "nvidia-bug-report.sh")) << f[0].action;
}

TEST(GpuMissing, SilentForVfioPassthroughAndWhenBusNotLooked) {
  auto h = make_header(2);
  h.pci_gpus = std::vector<PciGpu>{{"0000:07:00.0", std::string("nvidia")},
                                   {"0000:08:00.0", std::string("nvidia")},
                                   {"0000:c7:00.0", std::string("vfio-pci")}};
  EXPECT_TRUE(with_id(run_diagnose(h, two_busy_gpus()), "gpu-missing").empty());
  h.pci_gpus.reset();
  EXPECT_TRUE(with_id(run_diagnose(h, two_busy_gpus()), "gpu-missing").empty());
}

TEST(GpuMissing, TheOnlyGpuDroppingOutIsACountOfZero) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(20, 1.0, [&](size_t i, Sample& s) {
    if (i < 10) s.gpus.push_back(busy_gpu(0, j));
  });
  auto f = with_id(run_diagnose(h, samples), "gpu-missing");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].gpus, std::vector<int>{0});
}

TEST(GpuMissing, GpuThatDropsOutOfEnumerationIsNamed) {
  auto h = make_header(2);
  Jitter j;
  auto samples = make_samples(60, 1.0, [&](size_t i, Sample& s) {
    s.gpus.push_back(busy_gpu(0, j));
    if (i < 30) s.gpus.push_back(busy_gpu(1, j));
  });
  auto f = with_id(run_diagnose(h, samples), "gpu-missing");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].gpus, std::vector<int>{1});
  EXPECT_TRUE(contains(f[0].evidence, "00000000:08:00.0")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "lspci -s 0000:08:00.0 -vv"))
      << f[0].action;
  EXPECT_TRUE(contains(f[0].evidence, "missing from 30 of 60 samples"))
      << f[0].evidence;
}

TEST(GpuMissing, SilentWhenNvmlFailsAsAWholeOrTheGpuIsLost) {
  auto h = make_header(2);
  Jitter j;
  // A sample where NVML failed as a whole is not one GPU gone; a GPU still
  // listed but lost is gpu-lost.
  auto samples = make_samples(60, 1.0, [&](size_t i, Sample& s) {
    if (i % 10 == 5) {
      Event e;
      e.kind = "nvml_error";
      e.text = "nvmlDeviceGetCount: Unknown Error";
      s.events.push_back(e);
      return;
    }
    s.gpus.push_back(busy_gpu(0, j));
    s.gpus.push_back(i < 30 ? busy_gpu(1, j) : lost_gpu(1));
  });
  EXPECT_TRUE(with_id(run_diagnose(h, samples), "gpu-missing").empty());
}

}  // namespace
}  // namespace gd::test
