// The datacenter families against tracegen's MIG, NVLink and Hopper
// scenarios: dcgm-exporter's names, types and labels (GPU_I_PROFILE and
// GPU_I_ID per MIG instance, profiling ratios 0..1), the native per-instance
// and per-link series, and promtool's parser on the page.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "exporter/exporter.h"
#include "tracegen/tracegen.h"

namespace gd {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

struct Page {
  std::map<std::string, double> series;
  std::map<std::string, std::string> types, help;
  std::string text;
};

Page parse(const std::string& text) {
  Page p;
  p.text = text;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    for (const char* kind : {"# TYPE ", "# HELP "}) {
      if (line.rfind(kind, 0) != 0) continue;
      auto rest = line.substr(7);
      auto sp = rest.find(' ');
      (kind[2] == 'T' ? p.types : p.help)[rest.substr(0, sp)] =
          rest.substr(sp + 1);
    }
    if (line.empty() || line[0] == '#') continue;
    auto sp = line.rfind(' ');
    p.series[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
  }
  return p;
}

// Series of `name` whose labels contain every one of `parts`.
std::vector<double> find(const Page& p, const std::string& name,
                         const std::vector<std::string>& parts = {}) {
  std::vector<double> out;
  for (const auto& [key, v] : p.series) {
    if (key.rfind(name + "{", 0) != 0) continue;
    bool all = true;
    for (const auto& part : parts) all &= key.find(part) != std::string::npos;
    if (all) out.push_back(v);
  }
  return out;
}

struct Rendered {
  TraceHeader header;
  Sample sample;
  Page page;
};

Rendered render(const char* scenario, int gpus) {
  tracegen::Options o;
  o.gpus = gpus;
  o.duration_s = 60;
  Rendered r;
  auto samples = tracegen::generate_all(scenario, o, &r.header);
  r.sample = samples.back();
  MetricsInput in;
  in.header = &r.header;
  in.sample = &r.sample;
  for (const auto& g : r.sample.gpus)
    in.gpu_health.push_back({g.index, true, false, r.sample.t});
  in.now = r.sample.t;
  r.page = parse(render_metrics(in));
  return r;
}

TEST(ExporterDatacenter, MigInstancesCarryDcgmLabelsAndTheirOwnMemory) {
  const Rendered r = render("mig-a100", 2);
  const GpuSample& g = r.sample.gpus[0];
  ASSERT_TRUE(g.mig_instances);
  for (const MigInstance& m : *g.mig_instances) {
    const std::string labels =
        "{gpu=\"0\",UUID=\"" + r.header.gpus[0].uuid + "\",pci_bus_id=\"" +
        r.header.gpus[0].pci_bus_id +
        "\",device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-80GB\","
        "GPU_I_PROFILE=\"" +
        m.profile + "\",GPU_I_ID=\"" + std::to_string(m.gi_id) +
        "\",Hostname=\"node07\",DCGM_FI_DRIVER_VERSION=\"535.129.03\"}";
    auto used = r.page.series.find("DCGM_FI_DEV_FB_USED" + labels);
    ASSERT_NE(used, r.page.series.end()) << labels << "\n" << r.page.text;
    EXPECT_DOUBLE_EQ(used->second, std::floor(*m.mem_used_bytes / kMiB));
    EXPECT_DOUBLE_EQ(
        r.page.series.at("DCGM_FI_DEV_FB_FREE" + labels),
        std::floor((*m.mem_total_bytes - *m.mem_used_bytes) / kMiB));
    auto native = find(r.page, "gpudoctor_mig_memory_used_bytes",
                       {"gpu_instance=\"" + std::to_string(m.gi_id) + "\"",
                        "profile=\"" + m.profile + "\"", m.uuid});
    ASSERT_EQ(native.size(), 1u);
    EXPECT_DOUBLE_EQ(native[0], static_cast<double>(*m.mem_used_bytes));
  }
  // The split GPU has no whole-GPU framebuffer series (sums stay right) and
  // no utilisation (NVML has none for it); the other GPU keeps both.
  EXPECT_EQ(find(r.page, "DCGM_FI_DEV_FB_USED", {"gpu=\"0\""}).size(), 3u);
  EXPECT_TRUE(find(r.page, "DCGM_FI_DEV_GPU_UTIL", {"gpu=\"0\""}).empty());
  EXPECT_EQ(find(r.page, "DCGM_FI_DEV_FB_USED", {"gpu=\"1\""}).size(), 1u);
  EXPECT_TRUE(
      find(r.page, "DCGM_FI_DEV_FB_USED", {"gpu=\"1\"", "GPU_I_ID"}).empty());
  EXPECT_EQ(find(r.page, "gpudoctor_gpu_mig_mode",
                 {"gpu=\"0\"", "state=\"current\""}),
            std::vector<double>{1.0});
  // Each process on an instance says which.
  EXPECT_EQ(find(r.page, "gpudoctor_process_mig_instance",
                 {"gpu=\"0\"", "gpu_instance=\"5\""})
                .size(),
            1u);
}

TEST(ExporterDatacenter, ProfilingSeriesAreRatiosUnderDcgmNames) {
  const Rendered r = render("hopper-gpm", 1);
  const GpmActivity& a = r.sample.gpus[0].gpm;
  ASSERT_TRUE(a.sm_active_pct);
  const std::map<std::string, opt<double>> want = {
      {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", a.gr_engine_active_pct},
      {"DCGM_FI_PROF_SM_ACTIVE", a.sm_active_pct},
      {"DCGM_FI_PROF_SM_OCCUPANCY", a.sm_occupancy_pct},
      {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", a.tensor_active_pct},
      {"DCGM_FI_PROF_DRAM_ACTIVE", a.dram_active_pct},
      {"DCGM_FI_PROF_PIPE_FP64_ACTIVE", a.fp64_active_pct},
      {"DCGM_FI_PROF_PIPE_FP32_ACTIVE", a.fp32_active_pct},
      {"DCGM_FI_PROF_PIPE_FP16_ACTIVE", a.fp16_active_pct},
  };
  for (const auto& [name, pct] : want) {
    auto v = find(r.page, name, {"gpu=\"0\"", "modelName=\"NVIDIA H100"});
    ASSERT_EQ(v.size(), 1u) << name;
    EXPECT_DOUBLE_EQ(v[0], *pct / 100.0) << name;
    EXPECT_EQ(r.page.types.at(name), "gauge") << name;
  }
  EXPECT_EQ(r.page.help.at("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"),
            "Ratio of cycles the tensor (HMMA) pipe is active.");
  EXPECT_EQ(
      find(r.page, "gpudoctor_gpu_activity_percent", {"engine=\"sm_active\""}),
      std::vector<double>{*a.sm_active_pct});
  // Per-process utilisation of a Hopper job.
  const auto& p = (*r.sample.gpus[0].processes)[0];
  EXPECT_EQ(find(r.page, "gpudoctor_process_sm_utilization_percent",
                 {"pid=\"" + std::to_string(p.pid) + "\""}),
            std::vector<double>{*p.sm_util_pct});
}

TEST(ExporterDatacenter, NoProfilingSeriesWithoutGpm) {
  const Rendered r = render("healthy-training", 2);  // A100s
  EXPECT_EQ(r.page.text.find("DCGM_FI_PROF_"), std::string::npos);
  EXPECT_EQ(r.page.text.find("NVLINK"), std::string::npos);
  EXPECT_EQ(r.page.text.find("gpudoctor_mig_"), std::string::npos);
}

TEST(ExporterDatacenter, NvlinkTotalsPerGpuAndErrorsPerLink) {
  const Rendered r = render("nvlink-errors", 8);
  const GpuSample& g3 = r.sample.gpus[3];
  ASSERT_TRUE(g3.nvlinks);
  const NvLink& l7 = (*g3.nvlinks)[7];
  ASSERT_GT(*l7.crc_errors_total, 0u);
  EXPECT_EQ(find(r.page, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
                 {"gpu=\"3\""}),
            std::vector<double>{static_cast<double>(*l7.crc_errors_total)});
  EXPECT_EQ(find(r.page, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
                 {"gpu=\"2\""}),
            std::vector<double>{0.0});
  EXPECT_EQ(r.page.types.at("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"), "counter");
  EXPECT_EQ(find(r.page, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", {"gpu=\"3\""}),
            std::vector<double>{
                std::floor(static_cast<double>(*g3.nvlink_tx_bytes_per_s +
                                               *g3.nvlink_rx_bytes_per_s) /
                           1e6)});
  EXPECT_EQ(find(r.page, "gpudoctor_nvlink_errors_total",
                 {"gpu=\"3\"", "link=\"7\"", "type=\"replay\""}),
            std::vector<double>{static_cast<double>(*l7.replay_total)});
  EXPECT_EQ(find(r.page, "gpudoctor_nvlink_up").size(), 8u * 18u);
  EXPECT_EQ(find(r.page, "gpudoctor_gpu_fabric_state",
                 {"gpu=\"0\"", "state=\"completed\""}),
            std::vector<double>{1.0});
}

TEST(ExporterDatacenter, PromtoolAcceptsTheDatacenterPage) {
  ASSERT_STRNE(GD_PROMTOOL, "")
      << "promtool not found: install the Debian package prometheus and "
         "re-run cmake";
  for (auto [scenario, gpus] :
       {std::pair{"mig-a100", 2}, std::pair{"nvlink-errors", 8},
        std::pair{"hopper-gpm", 1}}) {
    const Rendered r = render(scenario, gpus);
    char path[] = "/tmp/gd_exporter_dc_XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, r.page.text.data(), r.page.text.size()),
              static_cast<ssize_t>(r.page.text.size()));
    close(fd);
    const std::string cmd =
        std::string(GD_PROMTOOL) + " check metrics < " + path + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    const int rc = WEXITSTATUS(pclose(p));
    unlink(path);
    ASSERT_TRUE(rc == 0 || rc == 3) << scenario << ": " << out;
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line))
      EXPECT_EQ(line.find("gpudoctor_"), std::string::npos)
          << scenario << ": " << line;
  }
}

}  // namespace
}  // namespace gd
