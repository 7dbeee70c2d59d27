// Frames for the tests of `top`'s screen: a header with GPUs and a sample
// with GPU processes and workers, built in memory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "monitor/frame.h"

namespace gd::top::test {

inline constexpr uint64_t kGiB = 1ull << 30;
inline constexpr double kT0 = 1732262400.0;

inline TraceHeader header_with(int gpus) {
  TraceHeader h;
  h.host.hostname = "node07";
  h.host.mem_total_bytes = 512 * kGiB;
  h.host.swap_total_bytes = 0;
  h.driver = DriverInfo{"535.129.03", "12.2", "12.535.129.03", "", ""};
  for (int i = 0; i < gpus; ++i) {
    GpuInfo g;
    g.index = i;
    g.name = "NVIDIA A100-SXM4-80GB";
    g.pci_bus_id = "00000000:0" + std::to_string(i + 7) + ":00.0";
    g.memory_total_bytes = 80 * kGiB;
    g.power_limit_w = 400.0;
    g.pcie_max_gen = 4;
    g.pcie_max_width = 16;
    g.temp_slowdown_c = 89;
    g.temp_shutdown_c = 92;
    g.sm_clock_max_mhz = 1410;
    g.mem_clock_max_mhz = 1593;
    h.gpus.push_back(g);
  }
  return h;
}

inline GpuSample gpu(int index, double util, uint64_t used) {
  GpuSample g;
  g.index = index;
  g.util_pct = util;
  g.mem_util_pct = util / 2;
  g.mem_used_bytes = used;
  g.temp_c = 60;
  g.power_w = 250;
  g.sm_clock_mhz = 1410;
  g.mem_clock_mhz = 1593;
  g.clock_event_reasons = std::vector<std::string>{};
  g.pcie_gen = 4;
  g.pcie_width = 16;
  g.pcie_tx_bytes_per_s = 1 << 20;
  g.pcie_rx_bytes_per_s = 2 << 20;
  g.processes = std::vector<GpuProcess>{};
  return g;
}

inline ProcessSample proc(uint32_t pid, uint32_t ppid, std::string user,
                          std::string cmd, double cpu,
                          std::string state = "S") {
  ProcessSample p;
  p.pid = pid;
  p.ppid = ppid;
  p.user = std::move(user);
  p.name = cmd.substr(0, cmd.find(' '));
  p.cmdline = std::move(cmd);
  p.state = std::move(state);
  p.cpu_pct = cpu;
  p.threads = 1;
  p.rss_bytes = 1ull << 30;
  p.start_time = kT0 - 3600;
  return p;
}

// Two GPUs: alice's trainer 100 (20 GiB on GPU 0) with workers 101, 102;
// bob's job 200 (40 GiB on GPU 1); a vanished pid 300 (5 GiB on GPU 1).
inline Sample two_jobs() {
  Sample s;
  s.t = kT0;
  auto g0 = gpu(0, 88, 21 * kGiB);
  g0.processes->push_back({100, 20 * kGiB, "compute"});
  auto g1 = gpu(1, 40, 46 * kGiB);
  g1.processes->push_back({200, 40 * kGiB, "compute"});
  g1.processes->push_back({300, 5 * kGiB, "compute"});
  s.gpus = {g0, g1};
  s.host.cpu_util_pct = 42;
  s.host.cpu_iowait_pct = 0.5;
  s.host.cpu_steal_pct = 0;
  s.host.load1 = 3.2;
  s.host.mem_available_bytes = 400 * kGiB;
  s.host.swap_used_bytes = 0;
  s.processes = {proc(100, 1, "alice", "python train.py --lr 3e-4", 95),
                 proc(101, 100, "alice", "python train.py --lr 3e-4", 60),
                 proc(102, 100, "alice", "python train.py --lr 3e-4", 70),
                 proc(200, 1, "bob", "python finetune.py", 30)};
  ProcessSample gone;
  gone.pid = 300;
  gone.state = "missing";
  s.processes.push_back(gone);
  return s;
}

inline std::shared_ptr<monitor::Frame> frame_of(TraceHeader h, Sample s) {
  auto f = std::make_shared<monitor::Frame>();
  f->seq = 1;
  f->source_name = h.host.hostname;
  f->header = std::make_shared<const TraceHeader>(std::move(h));
  auto hist = std::make_shared<monitor::GpuHistory>(*f->header);
  hist->add(*f->header, s);
  f->history = hist;
  f->sample = std::make_shared<const Sample>(std::move(s));
  auto fs = std::make_shared<monitor::FindingsState>();
  fs->source = "diagnosis of the last 60 s";
  fs->rules_checked = 29;
  f->findings = fs;
  return f;
}

}  // namespace gd::top::test
