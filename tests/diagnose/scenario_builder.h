// Builds in-memory traces for diagnosis tests: a header with N GPUs (A100-like
// defaults, every field overridable after the call), samples at a fixed
// interval with small deterministic jitter, and helpers to run the engine and
// pick findings. Generic on purpose: shared by the GPU-health and workload
// rule tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "diagnose/engine.h"
#include "model/sample.h"

namespace gd::test {

inline constexpr double kT0 = 1732262400.0;  // 2024-11-22 08:00:00 UTC
inline constexpr uint64_t kGiB = 1ull << 30;

// Deterministic noise: the same seed gives the same sequence on every run.
class Jitter {
 public:
  explicit Jitter(uint32_t seed = 12345) : state_(seed) {}
  // Uniform in [-amplitude, +amplitude].
  double operator()(double amplitude) {
    state_ = state_ * 1664525u + 1013904223u;
    return amplitude *
           ((static_cast<double>(state_ >> 8) / 16777216.0) * 2.0 - 1.0);
  }

 private:
  uint32_t state_;
};

inline TraceHeader make_header(int n_gpus) {
  TraceHeader h;
  h.host.hostname = "node07";
  h.host.kernel = "5.15.0-91-generic";
  h.host.cpu_model = "AMD EPYC 7763 64-Core Processor";
  h.host.cpu_count = 128;
  h.host.mem_total_bytes = 512 * kGiB;
  h.host.swap_total_bytes = 0;
  h.host.pid_namespace = "host";
  h.driver = DriverInfo{"535.129.03", "12.2", "12.535.129.03", "", ""};
  for (int i = 0; i < n_gpus; ++i) {
    GpuInfo g;
    g.index = i;
    g.uuid = "GPU-0000000" + std::to_string(i);
    g.name = "NVIDIA A100-SXM4-80GB";
    g.pci_bus_id = "00000000:0" + std::to_string(i + 7) + ":00.0";
    g.memory_total_bytes = 80 * kGiB;
    g.power_limit_w = 400.0;
    g.power_default_limit_w = 400.0;
    g.pcie_max_gen = 4;
    g.pcie_max_width = 16;
    g.temp_slowdown_c = 89;
    g.temp_shutdown_c = 92;
    g.sm_clock_max_mhz = 1410;
    g.mem_clock_max_mhz = 1593;
    g.compute_capability = "8.0";
    g.architecture = "ampere";
    g.ecc_enabled = true;
    g.mig_enabled = false;
    g.persistence_mode = true;
    g.compute_mode = "default";
    g.numa_node = i / 4;
    h.gpus.push_back(g);
  }
  return h;
}

// A healthy GPU under steady load: every field known, clocks at max, no
// clock-event reason, link at Gen4 x16 moving data, no ECC errors.
inline GpuSample busy_gpu(int index, Jitter& j) {
  GpuSample g;
  g.index = index;
  g.util_pct = 95 + j(3);
  g.mem_util_pct = 60 + j(5);
  g.mem_used_bytes = 60 * kGiB;
  g.temp_c = static_cast<int>(70 + j(2));
  g.mem_temp_c = static_cast<int>(65 + j(2));
  g.power_w = 300 + j(15);
  g.energy_mj_total = 900000000;
  g.fan_pct = std::nullopt;  // SXM boards have no fan reading
  g.sm_clock_mhz = 1410;
  g.mem_clock_mhz = 1593;
  g.pstate = 0;
  g.clock_event_reasons = std::vector<std::string>{};
  g.pcie_gen = 4;
  g.pcie_width = 16;
  g.pcie_tx_bytes_per_s = static_cast<uint64_t>(1.2e9 + j(1e8));
  g.pcie_rx_bytes_per_s = static_cast<uint64_t>(5.4e9 + j(3e8));
  g.pcie_replay_total = 0;
  g.ecc_sbe_volatile_total = 0;
  g.ecc_dbe_volatile_total = 0;
  g.retired_pages_pending = false;
  g.remapped_rows_pending = false;
  g.remapped_rows_failure = false;
  g.processes = std::vector<GpuProcess>{};
  return g;
}

// A healthy idle GPU: low clocks, gpu_idle reason, link down-trained to Gen1
// (normal power saving), almost no traffic.
inline GpuSample idle_gpu(int index, Jitter& j) {
  GpuSample g = busy_gpu(index, j);
  g.util_pct = 0;
  g.mem_util_pct = 0;
  g.mem_used_bytes = 1 * kGiB;
  g.temp_c = static_cast<int>(34 + j(1));
  g.power_w = 60 + j(3);
  g.sm_clock_mhz = 210;
  g.mem_clock_mhz = 1593;
  g.clock_event_reasons = std::vector<std::string>{"gpu_idle"};
  g.pcie_gen = 1;
  g.pcie_tx_bytes_per_s = static_cast<uint64_t>(20000 + j(5000));
  g.pcie_rx_bytes_per_s = static_cast<uint64_t>(20000 + j(5000));
  return g;
}

inline GpuSample lost_gpu(int index) {
  GpuSample g;
  g.index = index;
  g.lost = true;
  return g;
}

inline ProcessSample process(uint32_t pid, std::string name,
                             std::vector<std::string> libs = {}) {
  ProcessSample p;
  p.pid = pid;
  p.ppid = 1;
  p.user = "alice";
  p.name = name;
  p.cmdline = name;
  p.state = "R";
  p.cpu_pct = 100;
  p.threads = 8;
  p.rss_bytes = 4 * kGiB;
  p.libs = std::move(libs);
  return p;
}

inline Event xid_event(std::optional<int> gpu, std::optional<int> code,
                       std::string text,
                       std::optional<uint32_t> pid = std::nullopt) {
  Event e;
  e.kind = "xid";
  e.gpu = gpu;
  e.code = code;
  e.pid = pid;
  e.text = std::move(text);
  return e;
}

// n samples, one every interval_s from kT0; the healthy host part is filled
// in, then `fill(i, sample)` adds GPUs, processes and events.
inline std::vector<Sample> make_samples(
    size_t n, double interval_s,
    const std::function<void(size_t, Sample&)>& fill) {
  std::vector<Sample> out;
  Jitter j(777);
  for (size_t i = 0; i < n; ++i) {
    Sample s;
    s.t = kT0 + static_cast<double>(i) * interval_s;
    s.host.cpu_util_pct = 20 + j(3);
    s.host.cpu_iowait_pct = 0.3 + j(0.2);
    s.host.cpu_steal_pct = 0;
    s.host.load1 = 20 + j(2);
    s.host.mem_available_bytes = 400 * kGiB;
    s.host.swap_used_bytes = 0;
    s.host.swap_in_pages_per_s = 0;
    s.host.swap_out_pages_per_s = 0;
    s.host.disk_read_bytes_per_s = 10000000;
    s.host.disk_write_bytes_per_s = 300000;
    s.host.disk_busy_pct = 2;
    fill(i, s);
    out.push_back(std::move(s));
  }
  return out;
}

inline DiagnoseResult run_diagnose(const TraceHeader& h,
                                   std::vector<Sample> samples,
                                   DiagnoseOptions options = {}) {
  VectorSampleSource source(std::move(samples));
  return diagnose(h, source, options);
}

// The finding ids of the GPU-health rules (the other ids are workload rules).
inline bool is_gpu_health_id(const std::string& id) {
  for (const char* h :
       {"gpu-lost", "xid-error", "ecc-uncorrectable", "ecc-reset-required",
        "thermal-throttling", "power-brake", "power-capping",
        "pcie-link-degraded", "nvml-driver-mismatch", "persistence-mode-off",
        "driver-cuda-mismatch", "host-oom-kill"})
    if (id == h) return true;
  return false;
}

inline std::vector<Finding> with_id(const DiagnoseResult& r,
                                    const std::string& id) {
  std::vector<Finding> out;
  for (const auto& f : r.findings)
    if (f.id == id) out.push_back(f);
  return out;
}

// The rule `id`'s entry in the result's not_judged list; nullptr if it judged.
inline const NotJudged* not_judged(const DiagnoseResult& r,
                                   const std::string& id) {
  auto it = std::find_if(r.not_judged.begin(), r.not_judged.end(),
                         [&](const NotJudged& n) { return n.id == id; });
  return it == r.not_judged.end() ? nullptr : &*it;
}

}  // namespace gd::test
