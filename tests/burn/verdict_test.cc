// Every path of burn's verdict: each problem alone, at and around its
// threshold, on a node of identical peers whose other GPUs are healthy.
#include "burn/verdict.h"

#include <gtest/gtest.h>

#include "burn/figures.h"

namespace gd::burn {
namespace {

// A healthy A100 result: FP32 at 95% of its 19.5 TFLOP/s peak, memtest and
// copies at plausible rates, 10 NVML readings at 70 C, Gen4 x16.
GpuVerdict healthy(int gpu) {
  GpuVerdict v;
  v.gpu = gpu;
  v.name = "NVIDIA A100-SXM4-80GB";
  v.pci_bus_id = "00000000:07:00.0";
  v.device.ordinal = gpu;
  v.device.name = v.name;
  v.device.total_bytes = 80ull << 30;
  v.device.cc_major = 8;
  v.device.sm_count = 108;
  v.device.clock_khz = 1410000;
  auto& r = v.run;
  r.ran = true;
  r.compute.ran = true;
  r.compute.gflops_fp32 = 18500;
  r.compute.gflops_fp64 = 9300;
  r.compute.checked = 1000000;
  r.compute.tensor_note = "no cuBLAS";
  r.memory.ran = true;
  r.memory.bytes_tested = 70ull << 30;
  r.memory.bytes_per_s = 1.6e12;
  r.memory.patterns = {"walking ones", "walking zeros", "moving inversions",
                       "address in address", "seeded random"};
  r.copy.ran = true;
  r.copy.h2d_bytes_per_s = 25e9;
  r.copy.d2h_bytes_per_s = 25e9;
  GpuWatch& w = v.watch;
  for (int t = 0; t < 10; ++t) {
    Sample s;
    s.t = t;
    GpuSample g;
    g.index = gpu;
    g.temp_c = 70;
    g.clock_event_reasons = std::vector<std::string>{};
    g.pcie_gen = 4;
    g.pcie_width = 16;
    g.ecc_sbe_volatile_total = 0;
    g.ecc_dbe_volatile_total = 0;
    s.gpus.push_back(g);
    w.add(gpu, s);
  }
  return v;
}

struct Node {
  std::vector<GpuVerdict> gpus;
  BurnReport report;
  std::vector<Finding> findings;
  explicit Node(int n = 4) {
    for (int i = 0; i < n; ++i) {
      gpus.push_back(healthy(i));
      GpuInfo info;
      info.index = i;
      info.name = "NVIDIA A100-SXM4-80GB";
      info.pcie_max_gen = 4;
      info.pcie_max_width = 16;
      report.header.gpus.push_back(info);
    }
  }
  GpuVerdict& judged(int gpu) {
    judge(gpus, findings, report);
    return gpus[gpu];
  }
  std::string reasons(int gpu) {
    std::string out;
    for (const auto& r : gpus[gpu].reasons) out += r + " | ";
    return out;
  }
  // Readings of `gpu` with `reasons` in `share` of 10 samples.
  void readings(int gpu, std::vector<std::string> reasons, int of_ten,
                int temp = 88) {
    gpus[gpu].watch = GpuWatch{};
    for (int t = 0; t < 10; ++t) {
      Sample s;
      GpuSample g;
      g.index = gpu;
      g.temp_c = t < of_ten ? temp : 70;
      g.clock_event_reasons = t < of_ten ? reasons : std::vector<std::string>{};
      g.pcie_gen = 4;
      g.pcie_width = 16;
      s.gpus.push_back(g);
      gpus[gpu].watch.add(gpu, s);
    }
  }
};

TEST(BurnVerdict, HealthyGpuPassesWithItsFigures) {
  Node n;
  auto& v = n.judged(0);
  EXPECT_EQ(v.verdict, "pass") << n.reasons(0);
  EXPECT_EQ(v.reasons.front(),
            "18.5 TFLOP/s FP32 (peers 18.5; 95% of the 19.5 TFLOP/s peak)");
  EXPECT_NE(n.reasons(0).find("memtest 5 patterns over 70.0 GiB at 1.60 TB/s"),
            std::string::npos);
  EXPECT_NE(n.reasons(0).find("H2D 25.0 GB/s, D2H 25.0 GB/s on Gen4 x16"),
            std::string::npos);
  EXPECT_NE(n.reasons(0).find("peak 70 C | no clock events"),
            std::string::npos);
  EXPECT_EQ(v.throttled_pct, 0);
  ASSERT_TRUE(v.fp32_expected_gflops);
  EXPECT_NEAR(*v.fp32_expected_gflops, 19491, 1);
}

TEST(BurnVerdict, WhatStopsTheGpuFailsIt) {
  Node n;
  n.gpus[0].run.fatal_error =
      "cuEventSynchronize: CUDA_ERROR_ECC_UNCORRECTABLE (...)";
  n.gpus[0].run.fatal_phase = "compute FP32";
  n.gpus[0].run.fatal_at_s = 2.04;
  n.gpus[1].run.hung = true;
  n.gpus[1].run.hung_phase = "memory";
  Sample lost;
  lost.events.push_back(
      {"gpu_lost", 2, std::nullopt, std::nullopt, "GPU is lost", "", ""});
  n.gpus[2].watch.add(2, lost);
  n.judged(0);
  EXPECT_EQ(n.gpus[0].verdict, "fail");
  EXPECT_EQ(n.reasons(0),
            "cuEventSynchronize: CUDA_ERROR_ECC_UNCORRECTABLE (...) during "
            "compute FP32 at 2.0 s: "
            "the GPU stopped working | ");
  EXPECT_EQ(n.gpus[1].verdict, "fail");
  EXPECT_NE(n.reasons(1).find("stopped responding during memory"),
            std::string::npos);
  EXPECT_EQ(n.gpus[2].verdict, "fail");
  EXPECT_NE(n.reasons(2).find("lost during the run"), std::string::npos);
  // Problems come first, the figures become notes.
  EXPECT_FALSE(n.gpus[1].notes.empty());
}

TEST(BurnVerdict, WrongResultsFail) {
  Node n;
  n.gpus[0].run.compute.errors = 5;
  n.gpus[0].run.compute.first_errors = {{"gd_fma_f32", 3, 1, 0}};
  n.gpus[1].run.copy.mismatches = 1;
  n.judged(0);
  EXPECT_EQ(n.gpus[0].verdict, "fail");
  EXPECT_EQ(n.reasons(0),
            "5 compute errors: 5 of 1000000 results differ from the reference "
            "(gd_fma_f32) | ");
  EXPECT_EQ(n.gpus[1].verdict, "fail");
  EXPECT_NE(n.reasons(1).find("1 copy round trip came back different"),
            std::string::npos);
}

TEST(BurnVerdict, MemoryErrorsAreTiedToTheCountersThatMoved) {
  Node n;
  for (int gpu : {0, 1}) {
    auto& m = n.gpus[gpu].run.memory;
    m.bad_addresses = {0x7f0001000000, 0x7f0002000000, 0x7f0003000000,
                       0x7f0004000000, 0x7f0005000000};
    m.bad_address_count = 5;
    m.mismatches = 40;
  }
  Sample later;
  GpuSample g;
  g.index = 0;
  g.ecc_dbe_volatile_total = 2;
  g.ecc_sbe_volatile_total = 0;
  g.remapped_rows_pending = true;
  later.gpus.push_back(g);
  n.gpus[0].watch.add(0, later);
  n.judged(0);
  EXPECT_EQ(n.gpus[0].verdict, "fail");
  EXPECT_EQ(n.reasons(0),
            "5 memory errors at 0x7f0001000000, 0x7f0002000000, "
            "0x7f0003000000, 0x7f0004000000 "
            "and 1 more (40 wrong reads); ECC/remap counters moved: DBE +2, "
            "remap pending | ");
  EXPECT_NE(
      n.reasons(1).find("ECC counters did not move (errors ECC did not see)"),
      std::string::npos);
}

TEST(BurnVerdict, EccCountersAloneFailOrWarn) {
  Node n;
  auto later = [](int gpu, uint64_t sbe, uint64_t dbe, bool failure) {
    Sample s;
    GpuSample g;
    g.index = gpu;
    g.ecc_sbe_volatile_total = sbe;
    g.ecc_dbe_volatile_total = dbe;
    g.remapped_rows_failure = failure;
    s.gpus.push_back(g);
    return s;
  };
  n.gpus[0].watch.add(0, later(0, 0, 1, false));
  n.gpus[1].watch.add(1, later(1, 0, 0, true));
  n.gpus[2].watch.add(2, later(2, 12, 0, false));
  n.judged(0);
  EXPECT_EQ(n.gpus[0].verdict, "fail");
  EXPECT_EQ(n.reasons(0), "uncorrectable ECC errors during the run: DBE +1 | ");
  EXPECT_EQ(n.gpus[1].verdict, "fail");
  EXPECT_EQ(n.reasons(1), "row remapping failed: remap FAILED | ");
  EXPECT_EQ(n.gpus[2].verdict, "warn");
  EXPECT_EQ(n.reasons(2), "memory corrected errors under load: SBE +12 | ");
  EXPECT_EQ(n.gpus[3].verdict, "pass");
}

TEST(BurnVerdict, XidsBySeverity) {
  Node n;
  auto xid = [](int gpu, int code, std::string text) {
    Sample s;
    s.events.push_back(
        {"xid", gpu, code, std::nullopt, std::move(text), "", ""});
    return s;
  };
  n.gpus[0].watch.add(0, xid(0, 79, "GPU has fallen off the bus."));
  n.gpus[1].watch.add(1, xid(1, 13, "Graphics SM Warp Exception"));
  n.gpus[2].watch.add(2, xid(2, 45, "Preemptive cleanup"));
  n.judged(0);
  EXPECT_EQ(n.gpus[0].verdict, "fail");
  EXPECT_NE(n.reasons(0).find("Xid 79 ("), std::string::npos) << n.reasons(0);
  EXPECT_EQ(n.gpus[1].verdict, "warn");
  EXPECT_NE(
      n.reasons(1).find("Xid 13 (ROBUST_CHANNEL_GR_EXCEPTION) during the run"),
      std::string::npos);
  EXPECT_EQ(n.gpus[2].verdict, "pass") << "an informational Xid is no problem";
}

TEST(BurnVerdict, SlowdownShareThreshold) {
  Node n;
  n.readings(0, {"sw_power_cap", "sw_thermal_slowdown"}, 4, 87);
  n.readings(1, {"hw_power_brake_slowdown"}, 1);
  n.readings(2, {"sw_power_cap"}, 10, 75);
  n.gpus[3].watch = GpuWatch{};  // 0 of 30 readings: below the 5% floor
  for (int t = 0; t < 30; ++t) {
    Sample s;
    GpuSample g;
    g.index = 3;
    g.clock_event_reasons = std::vector<std::string>{};
    s.gpus.push_back(g);
    n.gpus[3].watch.add(3, s);
  }
  n.judged(0);
  EXPECT_EQ(n.gpus[0].verdict, "warn");
  EXPECT_EQ(n.reasons(0), "thermal slowdown 40% of the run at 87 C | ");
  EXPECT_EQ(n.gpus[0].throttled_pct, 40);
  EXPECT_EQ(n.gpus[1].verdict, "warn");
  EXPECT_NE(n.reasons(1).find(
                "hardware slowdown (HW slowdown / power brake) 10% of the run"),
            std::string::npos);
  // Power capping at full load is normal: pass, and said.
  EXPECT_EQ(n.gpus[2].verdict, "pass");
  EXPECT_NE(n.reasons(2).find("power-capped 100% of the run"),
            std::string::npos);
  EXPECT_EQ(n.gpus[2].throttled_pct, 0);
}

TEST(BurnVerdict, SlowerThanPeersOrBelowThePeak) {
  Node n(8);
  n.gpus[2].run.compute.gflops_fp32 = 18500 * 0.79;  // 21% slower
  n.gpus[3].run.compute.gflops_fp32 = 18500 * 0.91;  // within 10%
  n.gpus[4].run.memory.bytes_per_s = 1.6e12 * 0.8;   // 20% slower memory
  n.judged(0);
  EXPECT_EQ(n.gpus[2].verdict, "warn");
  EXPECT_EQ(n.reasons(2),
            "21% slower than its 7 identical peers (14.6 TFLOP/s FP32 vs 18.5 "
            "TFLOP/s) | ");
  EXPECT_EQ(n.gpus[3].verdict, "pass") << n.reasons(3);
  EXPECT_EQ(n.gpus[4].verdict, "warn");
  EXPECT_NE(n.reasons(4).find("memory 20% slower than its 7 identical peers"),
            std::string::npos);
  // All equally slow: no peer stands out, but the model's peak does.
  Node all(2);
  for (auto& g : all.gpus) g.run.compute.gflops_fp32 = 12000;
  all.judged(0);
  EXPECT_EQ(all.gpus[0].verdict, "warn");
  EXPECT_EQ(all.reasons(0),
            "FP32 12.0 TFLOP/s is 62% of this model's 19.5 TFLOP/s peak at "
            "1410 MHz | ");
  // A different model is no peer.
  Node mixed(2);
  mixed.gpus[1].name = "NVIDIA H100 80GB HBM3";
  mixed.gpus[1].run.compute.gflops_fp32 = 14000;
  mixed.gpus[1].device.cc_major = 9;
  mixed.gpus[1].device.sm_count = 132;
  mixed.gpus[1].device.clock_khz = 1980000;
  mixed.judged(0);
  EXPECT_EQ(mixed.reasons(1).find("slower than"), std::string::npos);
}

TEST(BurnVerdict, TheLinkUnderLoad) {
  Node n(4);
  // GPU 0 trained Gen3 under load (max Gen4).
  n.gpus[0].watch.pcie_gen = 3;
  n.gpus[0].run.copy.h2d_bytes_per_s = 11.8e9;
  n.gpus[0].run.copy.d2h_bytes_per_s = 12.1e9;
  // GPU 1 at Gen4 x16 but carrying far less than it should.
  n.gpus[1].run.copy.h2d_bytes_per_s = 9e9;
  n.gpus[3].watch.pcie_replays_first = 0;
  n.gpus[3].watch.pcie_replays_last = 7;
  n.judged(0);
  EXPECT_EQ(
      n.reasons(0),
      "PCIe Gen3 x16 under load (max Gen4 x16): 11.8 GB/s of ~25.2 GB/s | ");
  EXPECT_EQ(n.reasons(1),
            "PCIe copies 9.0 GB/s (36% of the ~25.2 GB/s a Gen4 x16 link "
            "carries) | ");
  EXPECT_EQ(n.reasons(3), "PCIe replays +7 under load | ");
  for (int g : {0, 1, 3}) EXPECT_EQ(n.gpus[g].verdict, "warn") << g;
  // Within the link's floor but well below its peers.
  Node p(4);
  p.gpus[2].run.copy.d2h_bytes_per_s = 18e9;
  p.judged(0);
  EXPECT_EQ(p.reasons(2),
            "PCIe copies 28% slower than its 3 identical peers (18.0 GB/s vs "
            "25.0 GB/s) | ");
  EXPECT_EQ(p.gpus[2].verdict, "warn");
}

TEST(BurnVerdict, FindingsOfTheWindowJoinTheVerdict) {
  Node n;
  n.readings(0, {"sw_thermal_slowdown"}, 10);
  Finding covered{"thermal-throttling",
                  "warning",
                  {0},
                  {},
                  "GPU 0 is thermally throttled",
                  "",
                  "",
                  0,
                  0};
  Finding critical{"memory-degrading",
                   "critical",
                   {1},
                   {},
                   "GPU 1 memory is degrading",
                   "",
                   "",
                   0,
                   0};
  Finding info{"persistence-mode-off",
               "info",
               {2},
               {},
               "Persistence mode is off on GPU 2",
               "",
               "",
               0,
               0};
  n.findings = {covered, critical, info};
  n.judged(0);
  EXPECT_EQ(n.gpus[0].verdict, "warn");
  EXPECT_EQ(n.reasons(0),
            "thermal slowdown 100% of the run at 88 C | ");  // no second line
  EXPECT_EQ(n.gpus[1].verdict, "fail");
  EXPECT_EQ(n.reasons(1),
            "finding memory-degrading: GPU 1 memory is degrading | ");
  EXPECT_EQ(n.gpus[2].verdict, "pass");
}

TEST(BurnVerdict, ExitCodes) {
  BurnReport r;
  r.gpus.resize(2);
  r.gpus[0].verdict = r.gpus[1].verdict = "pass";
  EXPECT_EQ(burn_exit_code(r), 0);
  r.gpus[1].verdict = "warn";
  EXPECT_EQ(burn_exit_code(r), 1);
  r.interrupted = true;
  EXPECT_EQ(burn_exit_code(r), 3);
  r.gpus[0].verdict = "fail";
  EXPECT_EQ(burn_exit_code(r), 2);
}

TEST(BurnFigures, PeaksAndLinks) {
  EXPECT_NEAR(*fp32_peak_gflops(8, 0, 108, 1410), 19491, 1);  // A100
  EXPECT_NEAR(*fp32_peak_gflops(9, 0, 132, 1980), 66908, 1);  // H100 SXM
  EXPECT_EQ(fp32_peak_gflops(5, 2, 16, 1000), std::nullopt);  // unknown lanes
  EXPECT_NEAR(*pcie_raw_bytes_per_s(4, 16) / 1e9, 31.5, 0.05);
  EXPECT_NEAR(*pcie_raw_bytes_per_s(3, 16) / 1e9, 15.75, 0.01);
  EXPECT_NEAR(*pcie_raw_bytes_per_s(1, 16) / 1e9, 4.0, 0.01);
  EXPECT_NEAR(*pcie_usable_bytes_per_s(4, 16) / 1e9, 25.2, 0.05);
  EXPECT_EQ(pcie_raw_bytes_per_s(7, 16), std::nullopt);
  EXPECT_EQ(flops_text(18912), "18.9 TFLOP/s");
  EXPECT_EQ(flops_text(950), "950 GFLOP/s");
  EXPECT_EQ(rate_text(25.2e9), "25.2 GB/s");
  EXPECT_EQ(rate_text(1.634e12), "1.63 TB/s");
  EXPECT_EQ(rate_text(812e6), "812 MB/s");
}

TEST(BurnWatch, CountsOnlyItsGpuAndKeepsFirstAndLast) {
  GpuWatch w;
  for (int t = 0; t < 4; ++t) {
    Sample s;
    s.t = t;
    for (int gpu : {0, 1}) {
      GpuSample g;
      g.index = gpu;
      g.temp_c = 60 + t + 10 * gpu;
      g.ecc_sbe_volatile_total = uint64_t(t * (gpu + 1));
      g.pcie_gen = t == 2 ? 4 : 3;
      g.clock_event_reasons =
          std::vector<std::string>{t == 1 ? "hw_thermal_slowdown" : "gpu_idle"};
      s.gpus.push_back(g);
    }
    s.events.push_back({"xid", 1, 48, std::nullopt, "DBE", "", ""});
    w.add(0, s);
  }
  EXPECT_EQ(w.samples, 4u);
  EXPECT_EQ(w.peak_temp_c, 63);
  EXPECT_EQ(w.sbe_delta(), 3);
  EXPECT_EQ(w.pcie_gen, 4);
  EXPECT_EQ(w.thermal_samples, 1u);
  EXPECT_EQ(w.any_event_samples, 1u);  // idle is no clock event
  EXPECT_EQ(w.throttled_pct(), 25);
  EXPECT_TRUE(w.xids.empty()) << "GPU 1's Xid";
  Sample stale;
  GpuSample g;
  g.index = 0;
  g.stale = true;
  stale.gpus.push_back(g);
  w.add(0, stale);
  EXPECT_EQ(w.stale_samples, 1u);
  EXPECT_EQ(w.samples, 4u);
}

}  // namespace
}  // namespace gd::burn
