// tracegen's GPUs carry the fields of the additions to version 1 with the
// values a healthy A100 shows in nvidia-smi -q, in every scenario: the
// pci_gpus of the header match the GPUs, the T.Limit margin follows the
// temperature, and GPU processes see the host's large /dev/shm.
#include <gtest/gtest.h>

#include <set>

#include "tracegen/tracegen.h"

namespace gd {
namespace {

tracegen::Options small(int gpus) {
  tracegen::Options o;
  o.gpus = gpus;
  o.duration_s = 30;
  return o;
}

TEST(TracegenNewFields, EveryScenarioCarriesTheHealthyDefaults) {
  for (const auto& info : tracegen::scenarios()) {
    SCOPED_TRACE(info.name);
    // Scenarios built around these fields (a failing memory, a recovery
    // action, a GPU missing from the bus) and their look-alikes set them on
    // purpose; so do the datacenter scenarios (H100s, MIG).
    bool about_new_fields = false;
    for (const auto* ids : {&info.fires, &info.silent})
      for (const std::string& id : *ids)
        for (const char* own :
             {"memory-degrading", "recovery-action-required", "gpu-missing",
              "pcie-aer-errors", "dev-shm-small", "nvlink-degraded",
              "low-sm-efficiency", "tensor-cores-unused", "memory-underused"})
          about_new_fields |= id == own;
    if (about_new_fields) continue;
    TraceHeader h;
    const auto samples = tracegen::generate_all(
        info.name, small(std::max(2, info.min_gpus)), &h);
    ASSERT_FALSE(samples.empty());
    if (h.gpus.empty()) continue;  // NVML could not start (driver mismatch)
    ASSERT_TRUE(h.driver);
    EXPECT_EQ(h.driver->kernel_module_version, h.driver->driver_version);
    ASSERT_TRUE(h.pci_gpus);
    ASSERT_EQ(h.pci_gpus->size(), h.gpus.size());
    for (size_t i = 0; i < h.gpus.size(); ++i) {
      const GpuInfo& g = h.gpus[i];
      // "00000000:07:00.0" in NVML, "0000:07:00.0" in sysfs.
      EXPECT_EQ("0000" + g.pci_bus_id.substr(8), (*h.pci_gpus)[i].address);
      EXPECT_EQ((*h.pci_gpus)[i].driver, "nvidia");
      EXPECT_EQ(g.minor_number, g.index);
      EXPECT_EQ(g.bar1_total_bytes, 128ull << 30);
      EXPECT_FALSE(g.vbios_version.empty());
      EXPECT_EQ(g.temp_max_operating_c, 85);
    }
    const Sample& last = samples.back();
    for (const GpuSample& gs : last.gpus) {
      if (gs.lost || gs.stale) continue;
      EXPECT_EQ(gs.ecc_sram_uncorrectable_aggregate_total, 0u);
      EXPECT_EQ(gs.ecc_dbe_aggregate_total, 0u);
      EXPECT_EQ(gs.remapped_rows_uncorrectable_total, 0u);
      EXPECT_EQ(gs.row_remap_histogram, (RowRemapHistogram{640, 0, 0, 0, 0}));
      EXPECT_EQ(gs.recovery_action, kRecoveryNone);
      EXPECT_TRUE(gs.mem_reserved_bytes);
      EXPECT_TRUE(gs.bar1_used_bytes);
      EXPECT_TRUE(gs.read_errors.empty());
      const GpuInfo& info = h.gpus.at(gs.index);
      if (gs.temp_c && info.temp_slowdown_c) {
        EXPECT_EQ(gs.temp_limit_margin_c, *info.temp_slowdown_c - *gs.temp_c);
      }
    }
  }
}

TEST(TracegenNewFields, GpuProcessesSeeTheHostDevShm) {
  TraceHeader h;
  const auto samples = tracegen::generate_all("healthy-training", small(2), &h);
  std::set<uint32_t> on_gpu;
  for (const auto& g : samples.back().gpus)
    if (g.processes)
      for (const auto& p : *g.processes) on_gpu.insert(p.pid);
  ASSERT_FALSE(on_gpu.empty());
  for (const auto& p : samples.back().processes)
    if (on_gpu.count(p.pid)) {
      // Half of the host's memory: the tmpfs default outside containers.
      EXPECT_EQ(p.dev_shm_bytes, *h.host.mem_total_bytes / 2) << p.pid;
    }
}

}  // namespace
}  // namespace gd
