// The example lines of ../shared/trace-format.md (the contract other tools
// write to) parse, with the values the spec shows.
#include <gtest/gtest.h>

#include <string>

#include "trace/trace_io.h"

namespace gd {
namespace {

// Copied from trace-format.md; only the elided uuid ("GPU-5f0f...") is a
// string and stays as it is.
const char* kSpecHeader = R"({"format": "gpudoctor-trace", "version": 1,
 "host": {"hostname": "node07", "kernel": "5.15.0-91-generic",
          "cpu_model": "AMD EPYC 7763 64-Core Processor", "cpu_count": 128,
          "mem_total_bytes": 1081627033600, "swap_total_bytes": 0,
          "pid_namespace": "host"},
 "nvml_status": "ok",
 "driver": {"driver_version": "535.129.03", "cuda_driver_version": "12.2",
            "nvml_version": "12.535.129.03"},
 "gpus": [
  {"index": 0, "uuid": "GPU-5f0f...", "name": "NVIDIA A100-SXM4-80GB",
   "pci_bus_id": "00000000:07:00.0", "serial": "1562121000000",
   "memory_total_bytes": 85899345920,
   "power_limit_w": 400.0, "power_default_limit_w": 400.0,
   "pcie_max_gen": 4, "pcie_max_width": 16,
   "temp_slowdown_c": 89, "temp_shutdown_c": 92,
   "sm_clock_max_mhz": 1410, "mem_clock_max_mhz": 1593,
   "compute_capability": "8.0", "architecture": "ampere",
   "ecc_enabled": true, "mig_enabled": false, "persistence_mode": true,
   "compute_mode": "default", "numa_node": 3}
 ]})";

const char* kSpecSample = R"({"t": 1732262400.0,
 "gpus": [
  {"index": 0, "util_pct": 97.0, "mem_util_pct": 61.0,
   "mem_used_bytes": 70866960384, "temp_c": 71, "mem_temp_c": 64,
   "power_w": 312.5, "energy_mj_total": 912345678, "fan_pct": null,
   "sm_clock_mhz": 1410, "mem_clock_mhz": 1593, "pstate": 0,
   "clock_event_reasons": ["sw_power_cap"],
   "pcie_gen": 4, "pcie_width": 16,
   "pcie_tx_bytes_per_s": 1200000000, "pcie_rx_bytes_per_s": 5400000000,
   "pcie_replay_total": 0,
   "ecc_sbe_volatile_total": 0, "ecc_dbe_volatile_total": 0,
   "retired_pages_pending": false,
   "remapped_rows_pending": false, "remapped_rows_failure": false,
   "processes": [{"pid": 4242, "used_bytes": 68719476736, "type": "compute"}]}
 ],
 "host": {"cpu_util_pct": 41.0, "cpu_iowait_pct": 0.5, "cpu_steal_pct": 0.0,
          "load1": 52.1, "mem_available_bytes": 812345678901,
          "swap_used_bytes": 0, "swap_in_pages_per_s": 0.0,
          "swap_out_pages_per_s": 0.0,
          "disk_read_bytes_per_s": 12000000, "disk_write_bytes_per_s": 300000,
          "disk_busy_pct": 3.0},
 "processes": [
  {"pid": 4242, "ppid": 4100, "user": "alice", "name": "python",
   "cmdline": "python train.py --bs 256", "state": "R", "cpu_pct": 105.0,
   "threads": 37, "rss_bytes": 21474836480,
   "cgroup": "/kubepods/burstable/pod1a2b/3c4d",
   "libs": ["libcudart.so.12.1.105", "libnccl.so.2.18.3"]},
  {"pid": 4300, "ppid": 4242, "user": "alice", "name": "pt_data_worker",
   "cmdline": "python train.py --bs 256", "state": "R", "cpu_pct": 99.0,
   "threads": 1, "rss_bytes": 2147483648, "cgroup": null, "libs": []}
 ],
 "events": [
  {"kind": "xid", "gpu": 0, "code": 79, "pid": null,
   "text": "NVRM: Xid (PCI:0000:07:00): 79, pid=1234, GPU has fallen off the bus."}
 ]})";

const char* kSpecFaults =
    R"([{"function": "nvmlDeviceGetPowerUsage", "gpu": 1, "return": "NOT_SUPPORTED"},
           {"function": "nvmlDeviceGetComputeRunningProcesses", "gpu": 0, "hang_s": 30},
           {"gpu": 2, "lost_after_s": 5.0}])";

// JSON Lines hold one object per line: the pretty-printed examples become
// one line each (newlines are only whitespace there).
std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  return s;
}

TEST(SpecExample, HeaderParsesWithTheSpecValues) {
  const TraceHeader h = header_from_json(one_line(kSpecHeader), "spec:1");
  EXPECT_EQ(h.version, 1);
  EXPECT_EQ(h.host.hostname, "node07");
  EXPECT_EQ(h.host.kernel, "5.15.0-91-generic");
  EXPECT_EQ(h.host.cpu_model, "AMD EPYC 7763 64-Core Processor");
  EXPECT_EQ(h.host.cpu_count, 128);
  EXPECT_EQ(h.host.mem_total_bytes, 1081627033600ULL);
  EXPECT_EQ(h.host.swap_total_bytes, 0u);
  EXPECT_EQ(h.host.pid_namespace, "host");
  EXPECT_EQ(h.nvml_status, "ok");
  ASSERT_TRUE(h.driver.has_value());
  EXPECT_EQ(h.driver->driver_version, "535.129.03");
  EXPECT_EQ(h.driver->cuda_driver_version, "12.2");
  EXPECT_EQ(h.driver->nvml_version, "12.535.129.03");
  ASSERT_EQ(h.gpus.size(), 1u);
  const GpuInfo& g = h.gpus[0];
  EXPECT_EQ(g.index, 0);
  EXPECT_EQ(g.uuid, "GPU-5f0f...");
  EXPECT_EQ(g.name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(g.pci_bus_id, "00000000:07:00.0");
  EXPECT_EQ(g.serial, "1562121000000");
  EXPECT_EQ(g.memory_total_bytes, 85899345920ULL);
  EXPECT_EQ(g.power_limit_w, 400.0);
  EXPECT_EQ(g.power_default_limit_w, 400.0);
  EXPECT_EQ(g.pcie_max_gen, 4);
  EXPECT_EQ(g.pcie_max_width, 16);
  EXPECT_EQ(g.temp_slowdown_c, 89);
  EXPECT_EQ(g.temp_shutdown_c, 92);
  EXPECT_EQ(g.sm_clock_max_mhz, 1410);
  EXPECT_EQ(g.mem_clock_max_mhz, 1593);
  EXPECT_EQ(g.compute_capability, "8.0");
  EXPECT_EQ(g.architecture, "ampere");
  EXPECT_EQ(g.ecc_enabled, true);
  EXPECT_EQ(g.mig_enabled, false);
  EXPECT_EQ(g.persistence_mode, true);
  EXPECT_EQ(g.compute_mode, "default");
  EXPECT_EQ(g.numa_node, 3);
  EXPECT_EQ(h.faults_json, "");
}

TEST(SpecExample, SampleParsesWithTheSpecValues) {
  const Sample s = sample_from_json(one_line(kSpecSample), "spec:2");
  EXPECT_EQ(s.t, 1732262400.0);
  ASSERT_EQ(s.gpus.size(), 1u);
  const GpuSample& g = s.gpus[0];
  EXPECT_EQ(g.index, 0);
  EXPECT_FALSE(g.lost);
  EXPECT_EQ(g.util_pct, 97.0);
  EXPECT_EQ(g.mem_util_pct, 61.0);
  EXPECT_EQ(g.mem_used_bytes, 70866960384ULL);
  EXPECT_EQ(g.temp_c, 71);
  EXPECT_EQ(g.mem_temp_c, 64);
  EXPECT_EQ(g.power_w, 312.5);
  EXPECT_EQ(g.energy_mj_total, 912345678u);
  EXPECT_FALSE(g.fan_pct.has_value());  // null = not supported, never 0
  EXPECT_EQ(g.sm_clock_mhz, 1410);
  EXPECT_EQ(g.mem_clock_mhz, 1593);
  EXPECT_EQ(g.pstate, 0);
  EXPECT_EQ(g.clock_event_reasons, std::vector<std::string>{"sw_power_cap"});
  EXPECT_EQ(g.pcie_gen, 4);
  EXPECT_EQ(g.pcie_width, 16);
  EXPECT_EQ(g.pcie_tx_bytes_per_s, 1200000000u);
  EXPECT_EQ(g.pcie_rx_bytes_per_s, 5400000000ULL);
  EXPECT_EQ(g.pcie_replay_total, 0u);
  EXPECT_EQ(g.ecc_sbe_volatile_total, 0u);
  EXPECT_EQ(g.ecc_dbe_volatile_total, 0u);
  EXPECT_EQ(g.retired_pages_pending, false);
  EXPECT_EQ(g.remapped_rows_pending, false);
  EXPECT_EQ(g.remapped_rows_failure, false);
  ASSERT_TRUE(g.processes.has_value());
  ASSERT_EQ(g.processes->size(), 1u);
  EXPECT_EQ((*g.processes)[0].pid, 4242u);
  EXPECT_EQ((*g.processes)[0].used_bytes, 68719476736ULL);
  EXPECT_EQ((*g.processes)[0].type, "compute");

  EXPECT_EQ(s.host.cpu_util_pct, 41.0);
  EXPECT_EQ(s.host.cpu_iowait_pct, 0.5);
  EXPECT_EQ(s.host.cpu_steal_pct, 0.0);
  EXPECT_EQ(s.host.load1, 52.1);
  EXPECT_EQ(s.host.mem_available_bytes, 812345678901ULL);
  EXPECT_EQ(s.host.swap_used_bytes, 0u);
  EXPECT_EQ(s.host.swap_in_pages_per_s, 0.0);
  EXPECT_EQ(s.host.swap_out_pages_per_s, 0.0);
  EXPECT_EQ(s.host.disk_read_bytes_per_s, 12000000u);
  EXPECT_EQ(s.host.disk_write_bytes_per_s, 300000u);
  EXPECT_EQ(s.host.disk_busy_pct, 3.0);
  EXPECT_FALSE(s.host.psi_cpu_some_pct.has_value());  // absent = unknown

  ASSERT_EQ(s.processes.size(), 2u);
  const ProcessSample& p = s.processes[0];
  EXPECT_EQ(p.pid, 4242u);
  EXPECT_EQ(p.ppid, 4100u);
  EXPECT_EQ(p.user, "alice");
  EXPECT_EQ(p.name, "python");
  EXPECT_EQ(p.cmdline, "python train.py --bs 256");
  EXPECT_EQ(p.state, "R");
  EXPECT_EQ(p.cpu_pct, 105.0);
  EXPECT_EQ(p.threads, 37);
  EXPECT_EQ(p.rss_bytes, 21474836480ULL);
  EXPECT_EQ(p.cgroup, "/kubepods/burstable/pod1a2b/3c4d");
  EXPECT_EQ(p.libs, (std::vector<std::string>{"libcudart.so.12.1.105",
                                              "libnccl.so.2.18.3"}));
  EXPECT_FALSE(p.start_time.has_value());
  EXPECT_EQ(s.processes[1].name, "pt_data_worker");
  EXPECT_FALSE(s.processes[1].cgroup.has_value());
  EXPECT_TRUE(s.processes[1].libs.empty());

  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0].kind, "xid");
  EXPECT_EQ(s.events[0].gpu, 0);
  EXPECT_EQ(s.events[0].code, 79);
  EXPECT_FALSE(s.events[0].pid.has_value());
  EXPECT_EQ(s.events[0].text,
            "NVRM: Xid (PCI:0000:07:00): 79, pid=1234, GPU has fallen off the "
            "bus.");
}

TEST(SpecExample, ScenarioHeaderKeepsItsFaults) {
  std::string header = one_line(kSpecHeader);
  header.pop_back();  // the closing brace
  header += ", \"faults\": " + one_line(kSpecFaults) + "}";
  const TraceHeader h = header_from_json(header, "scenario:1");
  EXPECT_EQ(h.faults_json, one_line(kSpecFaults));
}

TEST(SpecExample, LostGpuExampleParses) {
  const Sample s = sample_from_json(
      R"({"t": 1732262401.0, "gpus": [{"index": 0, "lost": true}]})", "spec:3");
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_TRUE(s.gpus[0].lost);
}

}  // namespace
}  // namespace gd
