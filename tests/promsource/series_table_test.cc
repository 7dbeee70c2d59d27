// The series table: DCGM's clock reason bits as the trace's names, units
// converted (MiB, ratios), one entry per (metric, field), and the node join.
#include "promsource/series_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "promsource/node_match.h"

namespace gd::promsource {
namespace {

const Entry& entry(const std::string& query) {
  for (const Entry& e : entries())
    if (e.query == query) return e;
  throw std::runtime_error("no entry " + query);
}

TEST(SeriesTable, ClockReasonBitsAreTheTracesNames) {
  auto r = clock_event_reasons(0x20 | 0x1);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (std::vector<std::string>{"gpu_idle", "sw_thermal_slowdown"}));
  EXPECT_EQ(*clock_event_reasons(0x40),
            std::vector<std::string>{"hw_thermal_slowdown"});
  EXPECT_TRUE(clock_event_reasons(0)->empty());
  // Bits no name stands for are left out, not invented.
  EXPECT_TRUE(clock_event_reasons(0x10000)->empty());
  EXPECT_FALSE(clock_event_reasons(-1));
  EXPECT_FALSE(clock_event_reasons(1.5));
}

TEST(SeriesTable, UnitsAreConverted) {
  GpuSample g;
  entry("DCGM_FI_DEV_FB_USED").gpu(g, 2);
  EXPECT_EQ(g.mem_used_bytes, 2u * 1024 * 1024);
  entry("DCGM_FI_PROF_SM_ACTIVE").gpu(g, 0.25);
  EXPECT_EQ(g.gpm.sm_active_pct, 25);
  entry("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION").gpu(g, 123456);
  EXPECT_EQ(g.energy_mj_total, 123456u);
  entry("DCGM_FI_DEV_POWER_USAGE").gpu(g, 312.5);
  EXPECT_EQ(g.power_w, 312.5);
  entry("DCGM_FI_DEV_GPU_TEMP").gpu(g, 1e300);  // not a temperature
  EXPECT_FALSE(g.temp_c);
  entry("DCGM_FI_DEV_CLOCKS_EVENT_REASONS").gpu(g, 0x20);
  EXPECT_EQ(*g.clock_event_reasons,
            std::vector<std::string>{"sw_thermal_slowdown"});
  HostSample h;
  entry("max(node_memory_MemAvailable_bytes{$I})").host(h, 5e9);
  EXPECT_EQ(h.mem_available_bytes, 5000000000u);
}

TEST(SeriesTable, EveryEntryHasTheSetterOfItsKind) {
  std::set<std::string> queries;
  for (const Entry& e : entries()) {
    EXPECT_TRUE(queries.insert(e.query).second) << e.query;
    const bool gpu = e.scope == Scope::kGpu;
    if (e.scope == Scope::kProcess) {
      // A process's value goes to a listed GPU process or a node process.
      if (e.kind == Kind::kSample)
        EXPECT_NE(e.gpu_proc != nullptr, e.proc != nullptr) << e.query;
      else
        EXPECT_TRUE(e.kind == Kind::kProcessList ||
                    e.kind == Kind::kDeadProcess)
            << e.query;
      EXPECT_EQ(std::string(e.query).rfind("gpudoctor_", 0), 0u) << e.query;
      continue;
    }
    EXPECT_FALSE(e.gpu_proc || e.proc) << e.query;
    if (e.kind == Kind::kSample) {
      EXPECT_EQ(gpu, e.gpu != nullptr) << e.query;
      EXPECT_EQ(!gpu, e.host != nullptr) << e.query;
    }
    if (e.kind == Kind::kFact) {
      EXPECT_EQ(gpu, e.gpu_fact != nullptr) << e.query;
      EXPECT_EQ(!gpu, e.host_fact != nullptr) << e.query;
    }
    if (!gpu) {
      const std::string q = e.query;
      EXPECT_TRUE(q.find("$I") != std::string::npos ||
                  q.find("$S(") != std::string::npos)
          << q;
    }
  }
}

TEST(NodeMatch, NodeNamesGoIntoPromqlSafely) {
  EXPECT_EQ(instance_matcher("gpu-07.dc1"),
            R"(instance=~"gpu-07\\.dc1(:[0-9]+)?")");
  EXPECT_EQ(gpu_query("DCGM_FI_DEV_GPU_TEMP", "n1"),
            R"(DCGM_FI_DEV_GPU_TEMP{Hostname="n1"} or )"
            R"(DCGM_FI_DEV_GPU_TEMP{Hostname="",instance=~"n1(:[0-9]+)?"})");
  EXPECT_THROW(check_node_name("n1\"} or up{x=\""), std::invalid_argument);
  EXPECT_THROW(check_node_name(""), std::invalid_argument);
  EXPECT_THROW(check_node_name(std::string(300, 'a')), std::invalid_argument);
}

TEST(NodeMatch, HostnameFirstElseTheInstancesHost) {
  EXPECT_EQ(node_of("gpu07", "10.0.0.7:9400"), "gpu07");
  EXPECT_EQ(node_of("", "gpu07:9100"), "gpu07");
  EXPECT_EQ(node_of("", "gpu07"), "gpu07");
  EXPECT_EQ(node_of("", "[::1]:9100"), "[::1]:9100");
}

}  // namespace
}  // namespace gd::promsource
