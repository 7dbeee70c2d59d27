#include "views/status_view.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gd {
namespace {

TraceHeader a100_header() {
  TraceHeader h;
  h.host.hostname = "node07";
  h.host.cpu_count = 128;
  h.driver = DriverInfo{"535.129.03", "12.2", "12.535.129.03", "", ""};
  GpuInfo g;
  g.index = 0;
  g.name = "NVIDIA A100-SXM4-80GB";
  g.pci_bus_id = "00000000:07:00.0";
  g.memory_total_bytes = 85899345920ull;
  g.power_limit_w = 400;
  g.temp_slowdown_c = 89;
  g.sm_clock_max_mhz = 1410;
  g.pcie_max_gen = 4;
  g.pcie_max_width = 16;
  g.persistence_mode = true;
  h.gpus.push_back(g);
  return h;
}

GpuSample busy_gpu() {
  GpuSample s;
  s.index = 0;
  s.util_pct = 97;
  s.mem_used_bytes = 70866960384ull;
  s.temp_c = 71;
  s.power_w = 312.5;
  s.sm_clock_mhz = 1350;
  s.pcie_gen = 3;
  s.pcie_width = 16;
  s.clock_event_reasons = std::vector<std::string>{"sw_power_cap"};
  return s;
}

TEST(StatusView, ShowsEveryGpuValueAgainstItsLimit) {
  Sample s;
  s.gpus.push_back(busy_gpu());
  std::string out = render_status(a100_header(), s);
  EXPECT_NE(out.find("NVIDIA A100-SXM4-80GB"), std::string::npos) << out;
  EXPECT_NE(out.find("00000000:07:00.0"), std::string::npos);
  EXPECT_NE(out.find("Driver 535.129.03  CUDA 12.2"), std::string::npos);
  EXPECT_NE(out.find("util 97%"), std::string::npos) << out;
  EXPECT_NE(out.find("66.0 GiB / 80.0 GiB (82%)"), std::string::npos) << out;
  EXPECT_NE(out.find("temp 71 C (slowdown 89 C"), std::string::npos) << out;
  EXPECT_NE(out.find("power 312.5 / 400 W"), std::string::npos) << out;
  EXPECT_NE(out.find("SM clock 1350 / 1410 MHz"), std::string::npos) << out;
  EXPECT_NE(out.find("software power cap"), std::string::npos) << out;
  EXPECT_NE(out.find("PCIe Gen3 x16 of Gen4 x16  (below max)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("persistence on"), std::string::npos) << out;
}

// Fitted to 80 columns, a line breaks between its fields, never inside
// one, and nothing is lost; 0 leaves the lines whole.
TEST(StatusView, FitsTheWidthBreakingBetweenFields) {
  Sample s;
  s.gpus.push_back(busy_gpu());
  TraceHeader h = a100_header();
  h.gpus[0].uuid = "GPU-5f0f6a2e-1c3b-4d8e-9a7f-0b1c2d3e4f01";
  const std::string whole = render_status(h, s);
  const std::string fitted = render_status(h, s, 80);
  size_t longest = 0, start = 0;
  while (start < whole.size()) {
    size_t nl = whole.find('\n', start);
    longest = std::max(longest, nl - start);
    start = nl + 1;
  }
  EXPECT_GT(longest, 80u) << whole;
  start = 0;
  while (start < fitted.size()) {
    size_t nl = fitted.find('\n', start);
    EXPECT_LE(nl - start, 80u) << fitted.substr(start, nl - start);
    start = nl + 1;
  }
  EXPECT_NE(fitted.find("GPU 0  NVIDIA A100-SXM4-80GB  00000000:07:00.0\n     "
                        "GPU-5f0f6a2e-1c3b-4d8e-9a7f-0b1c2d3e4f01\n"),
            std::string::npos)
      << fitted;
  EXPECT_NE(fitted.find("SM clock 1350 / 1410 MHz"), std::string::npos)
      << fitted;
}

TEST(StatusView, UnknownIsNotZero) {
  Sample s;
  GpuSample g;
  g.index = 0;  // every field unknown
  s.gpus.push_back(g);
  std::string out = render_status(a100_header(), s);
  EXPECT_NE(out.find("util n/a "), std::string::npos) << out;
  EXPECT_NE(out.find("fan n/a\n"), std::string::npos) << out;
  EXPECT_NE(out.find("clock events: n/a"), std::string::npos) << out;
  EXPECT_EQ(out.find("util 0%"), std::string::npos) << out;
}

// An unknown value carries no unit: "mem temp n/a", never "mem temp n/a C".
TEST(StatusView, NoUnitFollowsAnUnknownValue) {
  Sample s;
  GpuSample g;
  g.index = 0;  // every field unknown
  s.gpus.push_back(g);
  TraceHeader h;  // the GPU's limits unknown too
  GpuInfo info;
  info.index = 0;
  h.gpus.push_back(info);
  std::string out = render_status(h, s);
  for (const char* unit : {" C", " W", " MHz", "%", "/s", " pages/s"})
    EXPECT_EQ(out.find(std::string("n/a") + unit), std::string::npos)
        << "unit '" << unit << "' after n/a in:\n"
        << out;
  for (const char* prefix : {"Gen", "x", "P"})
    EXPECT_EQ(out.find(prefix + std::string("n/a")), std::string::npos)
        << "'" << prefix << "' before n/a in:\n"
        << out;
  EXPECT_NE(out.find("mem temp n/a "), std::string::npos) << out;
  EXPECT_NE(out.find("power n/a / n/a (default n/a)"), std::string::npos)
      << out;
  EXPECT_NE(out.find("PCIe n/a of n/a"), std::string::npos) << out;
  EXPECT_NE(out.find("CPU n/a (iowait n/a, steal n/a)"), std::string::npos)
      << out;
  EXPECT_NE(out.find("in n/a out n/a\n"), std::string::npos) << out;
}

// One of a pair known: the unit stays with the number that has it.
TEST(StatusView, UnitStaysWithTheKnownHalfOfAPair) {
  Sample s;
  GpuSample g = busy_gpu();
  s.gpus.push_back(g);
  TraceHeader h = a100_header();
  h.gpus[0].power_limit_w.reset();
  h.gpus[0].pcie_max_width.reset();
  std::string out = render_status(h, s);
  EXPECT_NE(out.find("power 312.5 W / n/a"), std::string::npos) << out;
  EXPECT_NE(out.find("PCIe Gen3 x16 of Gen4 n/a"), std::string::npos) << out;
}

TEST(StatusView, LostAndStaleGpusAreSaidLoudly) {
  Sample s;
  GpuSample g;
  g.index = 0;
  g.lost = true;
  s.gpus.push_back(g);
  EXPECT_NE(render_status(a100_header(), s).find("LOST"), std::string::npos);
  s.gpus[0].lost = false;
  s.gpus[0].stale = true;
  EXPECT_NE(render_status(a100_header(), s).find("STALE"), std::string::npos);
}

TEST(StatusView, NoDriverSaysSoAndStillShowsTheHost) {
  TraceHeader h;
  h.host.hostname = "laptop";
  h.nvml_status = kNvmlNoDriver;
  h.nvml_error = "libnvidia-ml.so.1: cannot open shared object file";
  Sample s;
  s.host.cpu_util_pct = 12.5;
  std::string out = render_status(h, s);
  EXPECT_NE(out.find("no NVIDIA driver found (libnvidia-ml.so.1"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("CPU 12.5%"), std::string::npos) << out;
}

TEST(StatusView, DriverMismatchIsExplained) {
  TraceHeader h;
  h.nvml_status = kNvmlDriverMismatch;
  EXPECT_NE(explain_nvml_status(h).find("version mismatch"), std::string::npos);
  h.nvml_status = kNvmlOk;
  EXPECT_EQ(explain_nvml_status(h), "");
}

// nvidia-smi -q's aggregate ECC, remapped rows and bank histogram, and its
// T.Limit margin, on one compact line each.
TEST(StatusView, ShowsLifetimeEccRemappedRowsAndTemperatureMargin) {
  Sample s;
  GpuSample g = busy_gpu();
  s.gpus.push_back(g);
  // Without these fields (an older trace, an older GPU) no line is added.
  std::string old = render_status(a100_header(), s);
  EXPECT_EQ(old.find("ECC lifetime"), std::string::npos) << old;
  EXPECT_EQ(old.find("remapped rows"), std::string::npos) << old;
  EXPECT_EQ(old.find("to slowdown"), std::string::npos) << old;
  s.gpus.clear();
  g.ecc_sbe_aggregate_total = 12;
  g.ecc_dbe_aggregate_total = 0;
  g.ecc_sram_correctable_aggregate_total = 2;
  g.ecc_sram_uncorrectable_aggregate_total = 0;
  g.ecc_dram_correctable_aggregate_total = 10;
  g.ecc_dram_uncorrectable_aggregate_total = 0;
  g.remapped_rows_correctable_total = 1;
  g.remapped_rows_uncorrectable_total = 0;
  g.row_remap_histogram = RowRemapHistogram{639, 1, 0, 0, 0};
  g.recovery_action = kRecoveryNone;
  g.temp_limit_margin_c = 18;
  s.gpus.push_back(g);
  std::string out = render_status(a100_header(), s);
  EXPECT_NE(out.find("ECC lifetime SBE 12 DBE 0  SRAM corr 2 uncorr 0  DRAM "
                     "corr 10 uncorr 0\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("remapped rows corr 1 uncorr 0  bank remap availability "
                     "max 639 high 1 partial 0 low 0 none 0\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("temp 71 C (slowdown 89 C, shutdown n/a)  18 C to "
                     "slowdown"),
            std::string::npos)
      << out;
  // Recovery action "none" is the normal state: not shown.
  EXPECT_EQ(out.find("RECOVERY"), std::string::npos) << out;
  EXPECT_EQ(out.find("ERR!"), std::string::npos) << out;
}

TEST(StatusView, AbnormalMemoryHealthIsHighlighted) {
  Sample s;
  GpuSample g = busy_gpu();
  g.ecc_sram_uncorrectable_aggregate_total = 3;
  g.ecc_sram_threshold_exceeded = true;
  g.row_remap_histogram = RowRemapHistogram{600, 20, 10, 8, 2};
  g.recovery_action = kRecoveryDrainAndReset;
  s.gpus.push_back(g);
  std::string out = render_status(a100_header(), s);
  EXPECT_NE(out.find("SRAM corr n/a uncorr 3"), std::string::npos) << out;
  EXPECT_NE(out.find("SRAM ECC THRESHOLD EXCEEDED"), std::string::npos) << out;
  EXPECT_NE(out.find("none 2  (BANKS WITHOUT SPARE ROWS)"), std::string::npos)
      << out;
  EXPECT_NE(out.find("!! RECOVERY ACTION REQUIRED: DRAIN AND RESET"),
            std::string::npos)
      << out;
}

// nvidia-smi prints ERR! for a failed read and N/A for an unsupported one;
// so does status (n/a being the project's unknown mark).
TEST(StatusView, FailedReadIsErrNotUnknown) {
  Sample s;
  GpuSample g;
  g.index = 0;
  g.util_pct = 40;
  g.read_errors = {"power_w", "temp_c", "ecc_sbe_aggregate_total",
                   "clock_event_reasons"};
  g.ecc_dbe_aggregate_total = 0;
  s.gpus.push_back(g);
  std::string out = render_status(a100_header(), s);
  EXPECT_NE(out.find("power ERR! / 400 W"), std::string::npos) << out;
  EXPECT_NE(out.find("temp ERR! (slowdown 89 C"), std::string::npos) << out;
  EXPECT_NE(out.find("mem temp n/a"), std::string::npos) << out;
  EXPECT_NE(out.find("clock events: ERR!\n"), std::string::npos) << out;
  EXPECT_NE(out.find("ECC lifetime SBE ERR! DBE 0"), std::string::npos) << out;
  EXPECT_NE(out.find("ERR! read failed (not unsupported; NVML returned an "
                     "error): power_w, temp_c, ecc_sbe_aggregate_total, "
                     "clock_event_reasons\n"),
            std::string::npos)
      << out;
}

// Field names and the recovery action come from a trace: sanitised.
TEST(StatusView, NewTextFieldsAreSanitised) {
  Sample s;
  GpuSample g = busy_gpu();
  g.recovery_action = "evil\x1b[2J";
  g.read_errors = {"bad\x1b]0;title\x07"};
  s.gpus.push_back(g);
  std::string out = render_status(a100_header(), s);
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find('\x07'), std::string::npos) << out;
  EXPECT_NE(out.find("RECOVERY ACTION REQUIRED: evil"), std::string::npos)
      << out;
}

TEST(StatusView, WithoutNvmlTheModuleAndLibraryVersionsAreShown) {
  TraceHeader h;
  h.host.hostname = "node07";
  h.nvml_status = kNvmlDriverMismatch;
  h.driver = DriverInfo{"", "", "", "535.129.03", "535.104.05"};
  Sample s;
  s.t = 1732262400;
  const std::string out = render_status(h, s);
  EXPECT_NE(out.find("Kernel module 535.129.03  libnvidia-ml 535.104.05"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("Driver "), std::string::npos)
      << "no empty NVML driver line\n"
      << out;
}

TEST(StatusView, OtherWorkOutsideTheGpuJobsIsListedBusiestFirst) {
  Sample s;
  s.gpus.push_back(busy_gpu());
  s.host.cpu_util_pct = 99;
  s.host.other_cpu_top = std::vector<OtherCpuProcess>{
      {5120, "yes", "bob", std::nullopt, 99.7},
      {5121, "stress\x1b[2J", "", std::string("docker:3f2a"), 51.2}};
  std::string out = render_status(a100_header(), s);
  EXPECT_NE(out.find("other work (outside the GPU jobs): 5120 yes (bob) "
                     "100%, 5121 stress"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("(docker:3f2a) 51%"), std::string::npos) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << "sanitised";
  // Not looked at, or nothing else busy: no line.
  s.host.other_cpu_top = std::vector<OtherCpuProcess>{};
  EXPECT_EQ(render_status(a100_header(), s).find("other work"),
            std::string::npos);
  s.host.other_cpu_top.reset();
  EXPECT_EQ(render_status(a100_header(), s).find("other work"),
            std::string::npos);
}

}  // namespace
}  // namespace gd
