// The RDMA port rules: rdma-port-down, rdma-port-degraded, rdma-errors and
// comm-bound, on hand-built windows (the edges) and on tracegen's fabric
// scenarios (what the findings say).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenario_builder.h"
#include "tracegen/tracegen.h"

namespace gd::test {
namespace {

// Two ConnectX-7 InfiniBand ports on NUMA node 0 (GPUs 0-1) and 1 (2-3).
TraceHeader fabric_header() {
  TraceHeader h = make_header(4);
  for (GpuInfo& g : h.gpus) g.numa_node = g.index < 2 ? 0 : 1;
  h.host.rdma_devices.emplace();
  for (int d = 0; d < 2; ++d) {
    RdmaDevice dev;
    dev.device = "mlx5_" + std::to_string(d);
    dev.numa_node = d;
    dev.model = "MT4129";
    dev.ports.push_back({.port = 1,
                         .link_layer = "InfiniBand",
                         .max_rate_gbps = 400,
                         .netdev = std::nullopt});
    h.host.rdma_devices->push_back(dev);
  }
  return h;
}

RdmaPort up_port(int d) {
  RdmaPort p;
  p.device = "mlx5_" + std::to_string(d);
  p.port = 1;
  p.state = "ACTIVE";
  p.phys_state = "LinkUp";
  p.rate_gbps = 400;
  p.rx_bytes_per_s = 1e9;
  p.tx_bytes_per_s = 1e9;
  p.symbol_error_total = 100;
  p.link_downed_total = 1;
  p.link_error_recovery_total = 0;
  p.port_rcv_errors_total = 0;
  p.local_link_integrity_errors_total = 0;
  p.excessive_buffer_overrun_errors_total = 0;
  p.port_xmit_wait_total = 0;
  return p;
}

// `n` samples at 1 Hz of two healthy ports, `edit` changing them.
std::vector<Sample> ports_window(
    size_t n, const std::function<void(size_t, std::vector<RdmaPort>&)>& edit) {
  Jitter j;
  return make_samples(n, 1.0, [&](size_t i, Sample& s) {
    for (int g = 0; g < 4; ++g) s.gpus.push_back(busy_gpu(g, j));
    s.host.rdma_ports = std::vector<RdmaPort>{up_port(0), up_port(1)};
    edit(i, *s.host.rdma_ports);
  });
}

std::vector<Finding> of(const DiagnoseResult& r, const std::string& id) {
  std::vector<Finding> out;
  for (const Finding& f : r.findings)
    if (f.id == id) out.push_back(f);
  return out;
}

DiagnoseResult run_tracegen(const std::string& name, int gpus = 4) {
  tracegen::Options opt;
  opt.gpus = gpus;
  opt.duration_s = 600;
  tracegen::Generator gen(name, opt);
  std::vector<Sample> samples;
  Sample s;
  while (gen.next(s)) samples.push_back(s);
  return run_diagnose(gen.header(), std::move(samples));
}

// ---- rdma-port-down --------------------------------------------------------

TEST(RdmaPortDown, LinkDownedGrowthBetweenSamplesIsAWarningNamingTheGpus) {
  auto r =
      run_diagnose(fabric_header(), ports_window(60, [](size_t i, auto& p) {
                     if (i >= 30) p[1].link_downed_total = 2;
                   }));
  auto f = of(r, "rdma-port-down");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "warning");
  EXPECT_NE(f[0].title.find("mlx5_1/1"), std::string::npos) << f[0].title;
  EXPECT_EQ(f[0].gpus, (std::vector<int>{2, 3}));
  EXPECT_NE(f[0].evidence.find("link_downed grew by 1"), std::string::npos);
}

TEST(RdmaPortDown, StillDownAtTheEndIsCritical) {
  auto r =
      run_diagnose(fabric_header(), ports_window(60, [](size_t i, auto& p) {
                     if (i >= 40) {
                       p[0].state = "DOWN";
                       p[0].phys_state = "Polling";
                     }
                   }));
  auto f = of(r, "rdma-port-down");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "critical");
  EXPECT_EQ(f[0].gpus, (std::vector<int>{0, 1}));
  EXPECT_NE(f[0].evidence.find("DOWN / Polling"), std::string::npos);
}

TEST(RdmaPortDown, DownForTheWholeWindowIsSilentUnlessExpected) {
  auto window = ports_window(60, [](size_t, auto& p) {
    p[1].state = "DOWN";
    p[1].phys_state = "Polling";
  });
  EXPECT_TRUE(
      of(run_diagnose(fabric_header(), window), "rdma-port-down").empty());
  DiagnoseOptions o;
  o.config.set("rdma-port-down.expect_all_ports", 1);
  auto f = of(run_diagnose(fabric_header(), window, o), "rdma-port-down");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "critical");
}

TEST(RdmaPortDown, ClearedCountersAreNotGrowth) {
  auto r =
      run_diagnose(fabric_header(), ports_window(60, [](size_t i, auto& p) {
                     if (i >= 30) p[0].link_downed_total = 0;
                   }));
  EXPECT_TRUE(of(r, "rdma-port-down").empty());
}

// ---- rdma-port-degraded ----------------------------------------------------

TEST(RdmaPortDegraded, HalfThePeersRate) {
  auto r = run_diagnose(fabric_header(), ports_window(30, [](size_t, auto& p) {
                          p[1].rate_gbps = 200;
                        }));
  auto f = of(r, "rdma-port-degraded");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].title.find("mlx5_1/1 runs at 200 Gb/s instead of 400"),
            std::string::npos)
      << f[0].title;
  EXPECT_NE(f[0].evidence.find("50%"), std::string::npos) << f[0].evidence;
}

TEST(RdmaPortDegraded, PeersOfAnotherModelAreNoPeers) {
  TraceHeader h = fabric_header();
  (*h.host.rdma_devices)[1].model = "MT4125";
  auto r = run_diagnose(
      h, ports_window(30, [](size_t, auto& p) { p[1].rate_gbps = 200; }));
  EXPECT_TRUE(of(r, "rdma-port-degraded").empty());
}

TEST(RdmaPortDegraded, BelowTheSiteRate) {
  DiagnoseOptions o;
  o.config.set("rdma-port-degraded.expected_rate_gbps", 400);
  auto r = run_diagnose(fabric_header(),
                        ports_window(30,
                                     [](size_t, auto& p) {
                                       p[0].rate_gbps = 200;
                                       p[1].rate_gbps = 200;
                                     }),
                        o);
  EXPECT_EQ(of(r, "rdma-port-degraded").size(), 2u);
}

TEST(RdmaPortDegraded, ADownPortIsNotDegraded) {
  auto r = run_diagnose(fabric_header(), ports_window(30, [](size_t, auto& p) {
                          p[1].state = "DOWN";
                          p[1].rate_gbps = 10;
                        }));
  EXPECT_TRUE(of(r, "rdma-port-degraded").empty());
}

// ---- rdma-errors -----------------------------------------------------------

TEST(RdmaErrors, SymbolErrorsAboveNvSentinelsHourlyRateWarn) {
  // 1 every 10 s = 360/h > 120/h, 30 in the window.
  auto r =
      run_diagnose(fabric_header(), ports_window(300, [](size_t i, auto& p) {
                     *p[0].symbol_error_total += i / 10;
                   }));
  auto f = of(r, "rdma-errors");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "warning");
  EXPECT_NE(f[0].evidence.find("symbol errors +29"), std::string::npos)
      << f[0].evidence;
}

TEST(RdmaErrors, TenASecondIsCritical) {
  auto r =
      run_diagnose(fabric_header(), ports_window(30, [](size_t i, auto& p) {
                     *p[1].port_rcv_errors_total += 20 * i;
                   }));
  auto f = of(r, "rdma-errors");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "critical");
  EXPECT_EQ(f[0].gpus, (std::vector<int>{2, 3}));
}

TEST(RdmaErrors, AFewErrorsOrFlatOldOnesAreSilent) {
  auto r =
      run_diagnose(fabric_header(), ports_window(300, [](size_t i, auto& p) {
                     if (i > 100) *p[0].symbol_error_total += 3;
                     *p[1].symbol_error_total = 65535;  // old, flat
                   }));
  EXPECT_TRUE(of(r, "rdma-errors").empty());
}

TEST(RdmaErrors, LinkErrorRecoveriesWarn) {
  auto r =
      run_diagnose(fabric_header(), ports_window(300, [](size_t i, auto& p) {
                     *p[0].link_error_recovery_total = i / 100;
                   }));
  auto f = of(r, "rdma-errors");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].evidence.find("link error recoveries +2"), std::string::npos)
      << f[0].evidence;
}

// ---- scenarios -------------------------------------------------------------

TEST(RdmaScenarios, FlapIsAWarningOnMlx5_1) {
  auto f = of(run_tracegen("rdma-port-flap"), "rdma-port-down");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "warning");
  EXPECT_NE(f[0].title.find("mlx5_1/1"), std::string::npos);
  EXPECT_NE(f[0].evidence.find("ACTIVE again"), std::string::npos);
}

TEST(RdmaScenarios, LostPortIsCritical) {
  auto f = of(run_tracegen("rdma-port-lost"), "rdma-port-down");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "critical");
}

TEST(RdmaScenarios, SymbolErrorsNameThePortAndTheRate) {
  auto f = of(run_tracegen("rdma-symbol-errors"), "rdma-errors");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].title.find("mlx5_2/1"), std::string::npos);
  EXPECT_NE(f[0].evidence.find("/h"), std::string::npos);
}

TEST(RdmaScenarios, CommBoundNamesTheJobThePortAndTheDutyCycle) {
  auto r = run_tracegen("comm-bound");
  auto f = of(r, "comm-bound");
  ASSERT_EQ(f.size(), 1u) << r.findings.size();
  EXPECT_NE(f[0].title.find("mlx5_0/1"), std::string::npos) << f[0].title;
  EXPECT_NE(f[0].evidence.find("port_xmit_wait grew"), std::string::npos);
  EXPECT_NE(f[0].evidence.find("busy (util >= 70%)"), std::string::npos);
  EXPECT_NE(f[0].action.find("NCCL_IB_HCA"), std::string::npos);
  EXPECT_EQ(f[0].gpus, (std::vector<int>{0, 1, 2, 3}));
}

TEST(RdmaScenarios, CommBoundLookAlikesStaySilent) {
  for (const char* name : {"comm-bound-input-lookalike",
                           "comm-bound-other-port", "fabric-healthy"})
    EXPECT_TRUE(of(run_tracegen(name), "comm-bound").empty()) << name;
}

}  // namespace
}  // namespace gd::test
