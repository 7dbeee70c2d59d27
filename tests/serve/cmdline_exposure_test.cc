// What serve keeps and exports of each sample's processes: command lines
// redacted by default (--show-cmdline), and a bounded number of processes
// and command-line bytes per sample.
#include "serve/cmdline_exposure.h"

#include <gtest/gtest.h>

#include "model/process_budget.h"
#include "serve/serve_options.h"

namespace gd {
namespace {

Sample sample_with(std::vector<std::pair<uint32_t, std::string>> procs,
                   std::vector<uint32_t> on_gpu = {}) {
  Sample s;
  for (auto& [pid, cmd] : procs) {
    ProcessSample p;
    p.pid = pid;
    p.name = "python";
    p.cmdline = cmd;
    s.processes.push_back(p);
  }
  GpuSample g;
  g.index = 0;
  std::vector<GpuProcess> gps;
  for (uint32_t pid : on_gpu) {
    GpuProcess gp;
    gp.pid = pid;
    gps.push_back(gp);
  }
  g.processes = gps;
  s.gpus.push_back(g);
  return s;
}

TEST(CmdlineExposure, ParsesTheThreeModesOnly) {
  EXPECT_EQ(parse_cmdline_exposure("redacted"), CmdlineExposure::kRedacted);
  EXPECT_EQ(parse_cmdline_exposure("full"), CmdlineExposure::kFull);
  EXPECT_EQ(parse_cmdline_exposure("none"), CmdlineExposure::kNone);
  EXPECT_FALSE(parse_cmdline_exposure("Full"));
  EXPECT_FALSE(parse_cmdline_exposure(""));
}

TEST(CmdlineExposure, RedactedByDefault) {
  Sample s = sample_with({{1, "python serve.py --api-key=sk-123"}});
  apply_cmdline_exposure(s, ServeOptions().show_cmdline);
  EXPECT_EQ(s.processes[0].cmdline, "python serve.py --api-key=<redacted>");
}

TEST(CmdlineExposure, FullKeepsAndNoneEmpties) {
  Sample s = sample_with({{1, "app --token=t"}});
  apply_cmdline_exposure(s, CmdlineExposure::kFull);
  EXPECT_EQ(s.processes[0].cmdline, "app --token=t");
  apply_cmdline_exposure(s, CmdlineExposure::kNone);
  EXPECT_EQ(s.processes[0].cmdline, "");
  EXPECT_EQ(s.processes[0].name, "python");
}

TEST(ProcessBudget, KeepsGpuProcessesFirstAndCountsTheRest) {
  std::vector<std::pair<uint32_t, std::string>> procs;
  for (uint32_t pid = 1; pid <= 10; ++pid) procs.push_back({pid, "w"});
  Sample s = sample_with(procs, {9, 10});
  ProcessBudget b;
  b.max_processes = 4;
  EXPECT_EQ(apply_process_budget(s, b), 6u);
  ASSERT_EQ(s.processes.size(), 4u);
  EXPECT_EQ(s.processes[0].pid, 9u);
  EXPECT_EQ(s.processes[1].pid, 10u);
  EXPECT_EQ(s.processes[2].pid, 1u);
}

TEST(ProcessBudget, KeepsTheLauncherOfGpuProcessesBeforeTheirWorkers) {
  // Launcher 5 -> GPU ranks 9, 10; workers 1..4 of rank 9.
  std::vector<std::pair<uint32_t, std::string>> procs;
  for (uint32_t pid = 1; pid <= 10; ++pid) procs.push_back({pid, "w"});
  Sample s = sample_with(procs, {9, 10});
  for (auto& p : s.processes) p.ppid = p.pid >= 9 ? 5 : p.pid == 5 ? 0 : 9;
  ProcessBudget b;
  b.max_processes = 4;
  EXPECT_EQ(apply_process_budget(s, b), 6u);
  ASSERT_EQ(s.processes.size(), 4u);
  EXPECT_EQ(s.processes[2].pid, 5u);
  EXPECT_EQ(s.processes[3].pid, 1u);
}

TEST(ProcessBudget, CommandLineBytesPerSampleAreBounded) {
  std::vector<std::pair<uint32_t, std::string>> procs;
  for (uint32_t pid = 1; pid <= 100; ++pid)
    procs.push_back({pid, std::string(4096, 'x')});
  Sample s = sample_with(procs);
  ProcessBudget b;
  b.max_cmdline_bytes = 16 * 1024;
  b.short_cmdline_bytes = 100;
  EXPECT_EQ(apply_process_budget(s, b), 0u);
  size_t total = 0;
  for (const auto& p : s.processes) total += p.cmdline.size();
  EXPECT_LT(total, 16 * 1024 + 100 * 150);
  EXPECT_EQ(s.processes[0].cmdline.size(), 4096u);
  EXPECT_NE(s.processes[99].cmdline.find("…[truncated "), std::string::npos);
}

}  // namespace
}  // namespace gd
