// A host of GPUs at rest, healthy in every respect check judges, for tests
// to spoil one fact at a time.
#pragma once

#include <string>
#include <vector>

#include "check/check.h"

namespace gd::check::test {

struct Host {
  TraceHeader header;
  Sample sample;
  std::vector<Holder> holders;
  explicit Host(int gpus = 4) {
    header.kernel_log_error = "";
    header.driver.emplace().driver_version = "550.54.15";
    header.pci_gpus.emplace();
    for (int i = 0; i < gpus; ++i) {
      GpuInfo info;
      info.index = i;
      info.uuid = "GPU-0000000" + std::to_string(i);
      info.name = "NVIDIA H100 80GB HBM3";
      info.pci_bus_id = "00000000:1" + std::to_string(i) + ":00.0";
      info.persistence_mode = true;
      info.ecc_enabled = true;
      info.temp_slowdown_c = 87;
      info.minor_number = i;
      header.gpus.push_back(info);
      header.pci_gpus->push_back(
          {"0000:1" + std::to_string(i) + ":00.0", std::string("nvidia")});
      GpuSample g;
      g.index = i;
      g.util_pct = 0;
      g.temp_c = 32;
      g.mem_used_bytes = 400ull << 20;
      g.processes.emplace();
      g.clock_event_reasons = std::vector<std::string>{"gpu_idle"};
      g.recovery_action = kRecoveryNone;
      g.ecc_dbe_volatile_total = 0;
      sample.gpus.push_back(g);
    }
    sample.t = 1732262400;
  }
  GpuSample& gpu(int i) { return sample.gpus[static_cast<size_t>(i)]; }
  Result judge(std::vector<int> only = {}, bool node_only = false) {
    Input in;
    in.header = &header;
    in.sample = &sample;
    in.node_only = node_only;
    in.all_gpus = only.empty() && !node_only;
    in.gpus = only;
    in.holders = holders;
    return check::judge(in);
  }
};

inline Event event(const char* kind, std::optional<int> gpu, int code,
                   std::string text) {
  Event e;
  e.kind = kind;
  e.gpu = gpu;
  e.code = code;
  e.text = std::move(text);
  return e;
}

inline GpuProcess process(uint32_t pid, uint64_t bytes) {
  GpuProcess p;
  p.pid = pid;
  p.used_bytes = bytes;
  return p;
}

// "id@gpu:severity" of each finding, in the result's order.
inline std::vector<std::string> ids(const Result& r) {
  std::vector<std::string> out;
  for (const auto& c : r.findings)
    out.push_back(c.finding.id + "@" +
                  (c.finding.gpus.empty() ? std::string("host")
                                          : std::to_string(c.finding.gpus[0])) +
                  ":" + c.finding.severity);
  return out;
}

}  // namespace gd::check::test
