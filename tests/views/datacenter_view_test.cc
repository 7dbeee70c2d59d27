// status and ps on datacenter GPUs: GPM activity, NVLinks down or erroring,
// the fabric, MIG instances with their memory and processes; and nothing of
// it on a GPU that has none.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "views/ps_view.h"
#include "views/status_view.h"

namespace gd {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

TraceHeader header(bool mig) {
  TraceHeader h;
  h.host.hostname = "node07";
  h.driver = DriverInfo{"550.54.15", "12.4", "12.550.54.15", "", ""};
  GpuInfo g;
  g.index = 0;
  g.name = "NVIDIA H100 80GB HBM3";
  g.memory_total_bytes = 80 * kGiB;
  g.mig_enabled = mig;
  g.mig_enabled_pending = mig;
  g.nvlink_count = 18;
  h.gpus.push_back(g);
  return h;
}

Sample h100_sample() {
  Sample s;
  s.t = 1732262400;
  GpuSample g;
  g.index = 0;
  g.util_pct = 96;
  g.gpm.sm_active_pct = 41;
  g.gpm.sm_occupancy_pct = 22;
  g.gpm.tensor_active_pct = 30;
  g.gpm.dram_active_pct = 58;
  g.gpm.fp64_active_pct = 0;
  g.gpm.fp32_active_pct = 12;
  g.gpm.fp16_active_pct = 20;
  g.nvlinks.emplace();
  for (int l = 0; l < 18; ++l) {
    NvLink link;
    link.link = l;
    link.active = l != 5;
    link.version = 4;
    link.crc_errors_total = l == 7 ? 1234 : 0;
    link.replay_total = l == 7 ? 56 : 0;
    link.recovery_total = 0;
    g.nvlinks->push_back(link);
  }
  g.nvlink_tx_bytes_per_s = 100 * kGiB;
  g.nvlink_rx_bytes_per_s = 50 * kGiB;
  g.fabric_state = kFabricNotStarted;
  GpuProcess p;
  p.pid = 4242;
  p.used_bytes = 30 * kGiB;
  p.sm_util_pct = 88;
  p.mem_util_pct = 41;
  g.processes = std::vector<GpuProcess>{p};
  s.gpus.push_back(g);
  ProcessSample ps;
  ps.pid = 4242;
  ps.user = "alice";
  ps.name = "python";
  ps.cmdline = "python train.py";
  ps.state = "R";
  s.processes.push_back(ps);
  return s;
}

Sample mig_sample() {
  Sample s;
  s.t = 1732262400;
  GpuSample g;
  g.index = 0;
  g.mem_used_bytes = 16 * kGiB;
  g.mig_instances.emplace();
  uint32_t pid = 100;
  for (auto [gi, profile, used] : {std::tuple{1u, "3g.40gb", 10 * kGiB},
                                   std::tuple{5u, "2g.20gb", 4 * kGiB},
                                   std::tuple{6u, "2g.20gb", 2 * kGiB}}) {
    MigInstance m;
    m.gi_id = gi;
    m.ci_id = 0;
    m.profile = profile;
    m.uuid = "MIG-test-" + std::to_string(gi);
    m.mem_total_bytes = gi == 1 ? 40 * kGiB : 20 * kGiB;
    m.mem_used_bytes = used;
    g.mig_instances->push_back(m);
    GpuProcess p;
    p.pid = pid + gi;
    p.used_bytes = used;
    p.gi_id = gi;
    p.ci_id = 0;
    if (!g.processes) g.processes.emplace();
    g.processes->push_back(p);
    ProcessSample ps;
    ps.pid = pid + gi;
    ps.user = "user" + std::to_string(gi);
    ps.name = "job" + std::to_string(gi);
    ps.state = "S";
    s.processes.push_back(ps);
  }
  s.gpus.push_back(g);
  return s;
}

bool has(const std::string& out, const std::string& part) {
  return out.find(part) != std::string::npos;
}

TEST(StatusDatacenter, ShowsGpmActivityLinksAndTheFabric) {
  const std::string out = render_status(header(false), h100_sample());
  EXPECT_TRUE(has(out,
                  "activity (GPM): SMs active 41%  occupancy 22%  "
                  "tensor 30%  DRAM 58%  FP64 0% FP32 12% FP16 20%"))
      << out;
  EXPECT_TRUE(has(out,
                  "NVLink 4 18 links: 17 up, 1 DOWN (5)  tx 100.0 GiB/s "
                  "rx 50.0 GiB/s"))
      << out;
  EXPECT_TRUE(has(out,
                  "!! NVLink 7: 1234 CRC errors, 56 replays, 0 "
                  "recoveries"))
      << out;
  EXPECT_FALSE(has(out, "NVLink 8:")) << out;  // a clean link says nothing
  EXPECT_TRUE(has(out, "NVSwitch fabric: not started")) << out;
}

TEST(StatusDatacenter, MigInstancesWithMemoryAndProcesses) {
  TraceHeader h = header(true);
  h.gpus[0].mig_enabled_pending = false;
  const std::string out = render_status(h, mig_sample());
  EXPECT_TRUE(has(out,
                  "MIG 3g.40gb  GI 1 CI 0  MIG-test-1  memory 10.0 GiB / "
                  "40.0 GiB (25%)  processes 101 job1 10.0 GiB"))
      << out;
  EXPECT_TRUE(has(out, "MIG 2g.20gb  GI 6 CI 0")) << out;
  EXPECT_TRUE(has(out, "!! MIG mode off after the next GPU reset")) << out;
}

TEST(StatusDatacenter, NothingForAGpuWithoutThem) {
  TraceHeader h = header(false);
  h.gpus[0].nvlink_count.reset();
  Sample s;
  GpuSample g;
  g.index = 0;
  g.util_pct = 50;
  s.gpus.push_back(g);
  const std::string out = render_status(h, s);
  EXPECT_FALSE(has(out, "activity")) << out;
  EXPECT_FALSE(has(out, "NVLink")) << out;
  EXPECT_FALSE(has(out, "MIG 3g")) << out;
  EXPECT_FALSE(has(out, "fabric")) << out;
}

TEST(PsDatacenter, PerProcessUtilisationAndMigInstance) {
  Sample s = h100_sample();
  std::string out = render_ps(s, build_ps_rows(s));
  auto header_line = out.substr(0, out.find('\n'));
  EXPECT_TRUE(has(header_line, "SM% MEM%")) << out;
  EXPECT_TRUE(has(out, "   88   41 ")) << out;
  Sample m = mig_sample();
  out = render_ps(m, build_ps_rows(m));
  EXPECT_TRUE(has(out, "0    5/0   105 ")) << out;
  auto j = nlohmann::json::parse(ps_to_json(m, build_ps_rows(m)));
  const auto& p = j["processes"][1];
  EXPECT_EQ(p["pid"], 105);
  EXPECT_EQ(p["gi_id"], 5);
  EXPECT_EQ(p["ci_id"], 0);
  EXPECT_EQ(p["mig_profile"], "2g.20gb");
  EXPECT_TRUE(p["sm_util_pct"].is_null());  // unknown, never 0
  auto h = nlohmann::json::parse(ps_to_json(s, build_ps_rows(s)));
  EXPECT_EQ(h["processes"][0]["sm_util_pct"], 88.0);
  EXPECT_TRUE(h["processes"][0]["gi_id"].is_null());
}

}  // namespace
}  // namespace gd
