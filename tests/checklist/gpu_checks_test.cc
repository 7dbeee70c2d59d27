// persistence-mode, ecc-mode, ecc-pending, ecc-sram, row-remap,
// recovery-action, pcie-link, power-limit, pcie-acs, iommu.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checklist_fixture.h"

namespace gd::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class GpuChecks : public HealthyGpusTest {
 protected:
  CheckContext ctx{h, s, "/nonexistent", "/nonexistent"};
};

TEST_F(GpuChecks, PersistenceModeFoldsPassingGpusAndWarnsOnOff) {
  auto items = run_check(ctx, "persistence-mode");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "GPU 0,1: on");

  h.gpus[1].persistence_mode = false;
  items = run_check(ctx, "persistence-mode");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[1].status, CheckStatus::kWarn);
  EXPECT_EQ(items[1].value, "GPU 1: off");
  EXPECT_THAT(items[1].detail, HasSubstr("nvidia-persistenced"));
}

TEST_F(GpuChecks, EccModeWarnsWhenDisabledAndSkipsWhenUnsupported) {
  EXPECT_THAT(statuses(run_check(ctx, "ecc-mode")),
              ElementsAre(CheckStatus::kPass));
  h.gpus[0].ecc_enabled = false;
  h.gpus[1].ecc_enabled.reset();
  auto items = run_check(ctx, "ecc-mode");
  EXPECT_THAT(statuses(items),
              ElementsAre(CheckStatus::kWarn, CheckStatus::kSkip));
  EXPECT_EQ(items[0].value, "GPU 0: disabled");
}

TEST_F(GpuChecks, EccPendingWarnsOnPendingRemapAndFailsOnRemapFailure) {
  auto items = run_check(ctx, "ecc-pending");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "GPU 0,1: none pending");

  s.gpus[0].remapped_rows_pending = true;
  s.gpus[1].remapped_rows_failure = true;
  items = run_check(ctx, "ecc-pending");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);
  EXPECT_EQ(items[0].value, "GPU 0: row remap pending");
  EXPECT_THAT(items[0].detail, HasSubstr("nvidia-smi -r"));
  EXPECT_EQ(items[1].status, CheckStatus::kFail);

  s.gpus[0] = GpuSample{};
  s.gpus[0].index = 0;
  s.gpus[0].lost = true;
  items = run_check(ctx, "ecc-pending");
  EXPECT_EQ(items[0].status, CheckStatus::kSkip);
  EXPECT_EQ(items[0].detail, "GPU is lost");
}

TEST_F(GpuChecks, EccSramFailsOnAnyUncorrectableSramError) {
  auto items = run_check(ctx, "ecc-sram");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "GPU 0,1: no uncorrectable SRAM errors");

  s.gpus[0].ecc_sram_uncorrectable_aggregate_total = 2;
  s.gpus[1].ecc_sram_uncorrectable_aggregate_total.reset();
  s.gpus[1].ecc_sram_threshold_exceeded = true;
  items = run_check(ctx, "ecc-sram");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].status, CheckStatus::kFail);
  EXPECT_EQ(items[0].value, "GPU 0: 2 uncorrectable SRAM error(s)");
  EXPECT_THAT(items[0].detail, HasSubstr("RMA"));
  EXPECT_EQ(items[1].status, CheckStatus::kFail);
  EXPECT_EQ(items[1].value,
            "GPU 1: uncorrectable SRAM errors, threshold exceeded");

  // A GPU that does not report ECC by location: skip, not pass.
  s.gpus[0].ecc_sram_uncorrectable_aggregate_total.reset();
  s.gpus[0].ecc_sram_threshold_exceeded.reset();
  items = run_check(ctx, "ecc-sram");
  EXPECT_EQ(items[0].status, CheckStatus::kSkip);
  EXPECT_EQ(items[0].value, "GPU 0: unknown");
}

TEST_F(GpuChecks, RowRemapWarnsOnPartialOrLowBanksAndFailsOnNone) {
  auto items = run_check(ctx, "row-remap");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "GPU 0,1: spare rows in every bank");

  s.gpus[0].row_remap_histogram = RowRemapHistogram{630, 7, 2, 1, 0};
  s.gpus[1].row_remap_histogram = RowRemapHistogram{630, 7, 1, 1, 1};
  items = run_check(ctx, "row-remap");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);
  EXPECT_EQ(items[0].value,
            "GPU 0: banks with few spare rows: 1 low, 2 partial");
  EXPECT_EQ(items[1].status, CheckStatus::kFail);
  EXPECT_EQ(items[1].value, "GPU 1: 1 bank(s) without spare rows");
  EXPECT_THAT(items[1].detail, HasSubstr("nvidia-smi -q -d ROW_REMAPPER"));

  // "high" banks have most of their spares left: still a pass.
  s.gpus[0].row_remap_histogram = RowRemapHistogram{600, 40, 0, 0, 0};
  s.gpus[1].row_remap_histogram.reset();
  s.gpus[1].remapped_rows_failure = true;
  items = run_check(ctx, "row-remap");
  EXPECT_THAT(statuses(items),
              ElementsAre(CheckStatus::kPass, CheckStatus::kFail));
  EXPECT_EQ(items[1].value, "GPU 1: row remapping failed");
}

TEST_F(GpuChecks, RecoveryActionFailsUnlessNone) {
  auto items = run_check(ctx, "recovery-action");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "GPU 0,1: none");

  s.gpus[1].recovery_action = kRecoveryDrainAndReset;
  items = run_check(ctx, "recovery-action");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[1].status, CheckStatus::kFail);
  EXPECT_EQ(items[1].value, "GPU 1: drain_and_reset");
  EXPECT_THAT(items[1].detail, HasSubstr("reset"));

  s.gpus[1].recovery_action.clear();  // an older driver: unknown
  items = run_check(ctx, "recovery-action");
  EXPECT_THAT(statuses(items),
              ElementsAre(CheckStatus::kPass, CheckStatus::kSkip));
}

TEST_F(GpuChecks, PcieLinkLowGenerationIsNormalAtIdle) {
  auto items = run_check(ctx, "pcie-link");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "GPU 0,1: Gen4 x16 (max Gen4 x16)");

  for (auto& g : s.gpus) {  // idle: Gen1, no traffic
    g.pcie_gen = 1;
    g.util_pct = 0.0;
    g.pcie_tx_bytes_per_s = 20'000;
    g.pcie_rx_bytes_per_s = 10'000;
  }
  items = run_check(ctx, "pcie-link");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "GPU 0,1: Gen1 x16 (max Gen4 x16), idle");
  EXPECT_THAT(items[0].detail, HasSubstr("normal"));
}

TEST_F(GpuChecks, PcieLinkWarnsUnderLoadOrWithFewerLanes) {
  s.gpus[0].pcie_gen = 3;  // busy (healthy_sample moves 5 GB/s)
  s.gpus[1].pcie_width = 8;
  s.gpus[1].util_pct = 0.0;
  s.gpus[1].pcie_tx_bytes_per_s = 0;
  s.gpus[1].pcie_rx_bytes_per_s = 0;
  auto items = run_check(ctx, "pcie-link");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);
  EXPECT_EQ(items[0].value, "GPU 0: Gen3 x16 (max Gen4 x16), under load");
  EXPECT_EQ(items[1].status, CheckStatus::kWarn);
  EXPECT_EQ(items[1].value, "GPU 1: Gen4 x8 (max Gen4 x16)");
  EXPECT_THAT(items[1].detail, HasSubstr("reseat"));
}

TEST_F(GpuChecks, PcieLinkUsesUtilisationWhenThroughputIsUnknown) {
  s.gpus[0].pcie_gen = 3;
  s.gpus[0].pcie_tx_bytes_per_s.reset();
  s.gpus[0].util_pct = 80.0;
  EXPECT_EQ(run_check(ctx, "pcie-link")[0].status, CheckStatus::kWarn);
  s.gpus[0].util_pct = 5.0;
  EXPECT_EQ(run_check(ctx, "pcie-link")[0].status, CheckStatus::kPass);
}

TEST_F(GpuChecks, PowerLimitWarnsBelowDefault) {
  auto items = run_check(ctx, "power-limit");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "GPU 0,1: 400 W (default 400 W)");

  h.gpus[1].power_limit_w = 300.0;
  items = run_check(ctx, "power-limit");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[1].status, CheckStatus::kWarn);
  EXPECT_EQ(items[1].value, "GPU 1: 300 W (default 400 W)");
  EXPECT_THAT(items[1].detail, HasSubstr("nvidia-smi -i 1 -pl 400"));
}

TEST_F(GpuChecks, GpuChecksSkipWithoutDriver) {
  TraceHeader none;
  none.nvml_status = kNvmlNoDriver;
  Sample empty;
  CheckContext c(none, empty, "/nonexistent", "/nonexistent");
  for (auto* id : {"persistence-mode", "ecc-mode", "ecc-pending", "ecc-sram",
                   "row-remap", "recovery-action", "pcie-link", "power-limit",
                   "pcie-acs", "numa-placement"}) {
    auto items = run_check(c, id);
    ASSERT_EQ(items.size(), 1u) << id;
    EXPECT_EQ(items[0].status, CheckStatus::kSkip) << id;
    EXPECT_EQ(items[0].detail, "no NVIDIA driver") << id;
  }
}

// --- ACS ------------------------------------------------------------------

TEST(PcieAcsCheck, PassesWhenAcsIsOffOnTheSwitchPorts) {
  ChecklistTree tree("healthy");
  tree.add_gpus_behind_switch(4096, 0x0000);
  auto items = run_on_healthy_gpus(tree, "pcie-acs");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "off on 2 switch ports between GPUs");
}

TEST(PcieAcsCheck, WarnsWhenSwitchPortsRedirectPeerToPeer) {
  ChecklistTree tree("misconfigured");
  // SV | RR | CR | UF: what the kernel sets for VFIO isolation.
  tree.add_gpus_behind_switch(4096, 0x001d);
  auto items = run_on_healthy_gpus(tree, "pcie-acs");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);
  EXPECT_EQ(items[0].value,
            "ACS redirect on 0000:02:08.0 (ctrl 0x001d), 0000:02:10.0 (ctrl "
            "0x001d) (GPU 0,1)");
  EXPECT_THAT(items[0].detail, HasSubstr("setpci"));
}

TEST(PcieAcsCheck, SaysNeedsRootWhenOnlyTheHeaderIsReadable) {
  ChecklistTree tree("healthy");
  tree.add_gpus_behind_switch(64, 0x001d);  // what non-root reads
  auto items = run_on_healthy_gpus(tree, "pcie-acs");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kSkip);
  EXPECT_THAT(items[0].detail, HasSubstr("needs root"));
}

TEST(PcieAcsCheck, GpusOnSeparateRootPortsShareNoSwitch) {
  ChecklistTree tree("healthy");
  tree.add_gpus_on_root_ports();
  auto items = run_on_healthy_gpus(tree, "pcie-acs");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "no PCIe switch shared by GPUs");
}

TEST(PcieAcsCheck, SkipsWhenGpuIsNotInSysfs) {
  ChecklistTree tree("healthy");
  auto items = run_on_healthy_gpus(tree, "pcie-acs");
  EXPECT_EQ(items[0].status, CheckStatus::kSkip);
  EXPECT_THAT(items[0].detail, HasSubstr("00000000:07:00.0"));
}

// --- IOMMU ----------------------------------------------------------------

TEST(IommuCheck, PassesInPassthroughMode) {
  ChecklistTree tree("healthy");
  auto items = run_on_healthy_gpus(tree, "iommu");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "on, passthrough: 2 units (dmar0, ...)");
  EXPECT_EQ(items[0].detail, "cmdline: iommu=pt intel_iommu=on");
}

TEST(IommuCheck, WarnsWhenTranslatingAndTrustsTheGroupType) {
  ChecklistTree tree("misconfigured");
  auto items = run_on_healthy_gpus(tree, "iommu");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);
  EXPECT_THAT(items[0].value, HasSubstr("translating DMA"));
  EXPECT_THAT(items[0].detail, HasSubstr("iommu=pt"));

  // A kernel built with passthrough as default: the group says identity.
  tree.add_gpus_on_root_ports();
  tree.write(
      "sys/devices/pci0000:00/0000:00:01.0/0000:07:00.0/iommu_group/type",
      "identity\n");
  items = run_on_healthy_gpus(tree, "iommu");
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_THAT(items[0].detail, HasSubstr("GPU 0 IOMMU group type identity"));
}

TEST(IommuCheck, PassesWithoutIommu) {
  ChecklistTree tree("healthy");
  tree.remove("sys/class/iommu");
  tree.write("sys/class/.keep", "");
  auto items = run_on_healthy_gpus(tree, "iommu");
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "off (no IOMMU units)");
}

}  // namespace
}  // namespace gd::test
