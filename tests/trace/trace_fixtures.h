// Model values for trace tests and benchmarks.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "model/sample.h"

namespace gd::testing {

// A header with every field set (nothing is nullopt or "").
inline TraceHeader full_header() {
  TraceHeader h;
  h.host = HostInfo{.hostname = "node07",
                    .kernel = "5.15.0-91-generic",
                    .cpu_model = "AMD EPYC 7763 64-Core Processor",
                    .cpu_count = 128,
                    .mem_total_bytes = 1081627033600ULL,
                    .swap_total_bytes = 0,
                    .pid_namespace = "container",
                    .rdma_devices = std::vector<RdmaDevice>{
                        {.device = "mlx5_0",
                         .pci_bus_id = "0000:1a:00.0",
                         .numa_node = 0,
                         .model = "MT4129",
                         .fw_version = "28.39.1002",
                         .ports = {{.port = 1,
                                    .link_layer = "Ethernet",
                                    .max_rate_gbps = 400,
                                    .netdev = "ens8f0np0"}}}}};
  h.nvml_status = kNvmlError;
  h.nvml_error = "Unknown Error";
  h.kernel_log_error = "not read (--kmsg none)";
  h.driver = DriverInfo{.driver_version = "535.129.03",
                        .cuda_driver_version = "12.2",
                        .nvml_version = "12.535.129.03",
                        .kernel_module_version = "535.129.03",
                        .library_version = "535.104.05"};
  for (int i = 0; i < 2; ++i) {
    GpuInfo g;
    g.index = i;
    g.uuid = "GPU-5f0f1111-2222-3333-4444-55555555555" + std::to_string(i);
    g.name = "NVIDIA A100-SXM4-80GB";
    g.pci_bus_id = "00000000:0" + std::to_string(7 + i) + ":00.0";
    g.serial = "156212100000" + std::to_string(i);
    g.memory_total_bytes = 85899345920ULL;
    g.power_limit_w = 400.0;
    g.power_default_limit_w = 412.5;
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
    g.persistence_mode = i == 0;
    g.compute_mode = "exclusive_process";
    g.numa_node = 3 + i;
    g.minor_number = 1 - i;  // /dev/nvidiaN need not follow the index
    g.temp_max_operating_c = 87;
    g.temp_mem_max_c = 95;
    g.bar1_total_bytes = 137438953472ULL;
    g.vbios_version = "92.00.45.00.05";
    g.nvlink_count = 12;
    g.mig_profiles = std::vector<MigInstance>{
        {.gi_id = 1,
         .ci_id = 0,
         .profile = "3g.40gb",
         .uuid = "MIG-1b2c3d4e-5f60-5718-9a0b-1c2d3e4f5a6" + std::to_string(i),
         .mem_total_bytes = 42949672960ULL}};
    g.mig_enabled_pending = i == 1;
    h.gpus.push_back(g);
  }
  h.pci_gpus =
      std::vector<PciGpu>{{.address = "0000:07:00.0", .driver = "nvidia"},
                          {.address = "0000:08:00.0", .driver = "nvidia"},
                          {.address = "0000:0a:00.0", .driver = "nouveau"},
                          {.address = "0000:0b:00.0", .driver = "vfio-pci"}};
  h.faults_json =
      R"([{"function": "nvmlDeviceGetPowerUsage", "gpu": 1, "return": "NOT_SUPPORTED"}, {"gpu": 2, "lost_after_s": 5.0}])";
  return h;
}

// One GPU reading with every field set; values differ per `i`.
inline GpuSample full_gpu_sample(int i) {
  GpuSample g;
  g.index = i;
  g.util_pct = 97.25 - i;
  g.mem_util_pct = 61.0;
  g.mem_used_bytes = 70866960384ULL + static_cast<uint64_t>(i);
  g.temp_c = 71 + i;
  g.mem_temp_c = -5;  // below zero happens in test chambers
  g.power_w = 312.5;
  g.energy_mj_total = std::numeric_limits<uint64_t>::max() - 1;  // > 2^53
  g.fan_pct = 0.1;
  g.sm_clock_mhz = 1410;
  g.mem_clock_mhz = 1593;
  g.pstate = 0;
  g.clock_event_reasons =
      std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"};
  g.pcie_gen = 4;
  g.pcie_width = 16;
  g.pcie_tx_bytes_per_s = 1200000000ULL;
  g.pcie_rx_bytes_per_s = 5400000000ULL;
  g.pcie_replay_total = 3;
  g.ecc_sbe_volatile_total = 17;
  g.ecc_dbe_volatile_total = 1;
  g.retired_pages_pending = true;
  g.remapped_rows_pending = false;
  g.remapped_rows_failure = true;
  g.mem_reserved_bytes = 565182464ULL;
  g.bar1_used_bytes = 4194304ULL * (1 + static_cast<uint64_t>(i));
  g.ecc_sbe_aggregate_total = 1234;
  g.ecc_dbe_aggregate_total = 2;
  g.ecc_sram_correctable_aggregate_total = 1000;
  g.ecc_sram_uncorrectable_aggregate_total = 1;
  g.ecc_dram_correctable_aggregate_total = 234;
  g.ecc_dram_uncorrectable_aggregate_total = 1;
  g.ecc_sram_correctable_volatile_total = 15;
  g.ecc_sram_uncorrectable_volatile_total = 0;
  g.ecc_dram_correctable_volatile_total = 2;
  g.ecc_dram_uncorrectable_volatile_total = 1;
  g.ecc_sram_threshold_exceeded = false;
  g.remapped_rows_correctable_total = 3;
  g.remapped_rows_uncorrectable_total = 1;
  g.row_remap_histogram = RowRemapHistogram{
      .max = 639, .high = 1, .partial = 0, .low = 0, .none = 0};
  g.recovery_action = i == 0 ? kRecoveryNone : kRecoveryDrainAndReset;
  g.temp_limit_margin_c = -2;  // past the slowdown limit
  g.read_errors = {"fan_pct", "power_w"};
  g.processes = std::vector<GpuProcess>{{.pid = 4242 + static_cast<uint32_t>(i),
                                         .used_bytes = 68719476736ULL,
                                         .type = "compute",
                                         .sm_util_pct = 87.5,
                                         .mem_util_pct = 40.0,
                                         .gi_id = 1,
                                         .ci_id = 0},
                                        {.pid = 4294967295U,
                                         .used_bytes = 1,
                                         .type = "compute+graphics",
                                         .sm_util_pct = 0.0,
                                         .mem_util_pct = 0.0,
                                         .gi_id = 4294967294U,
                                         .ci_id = 7}};
  g.gpm = GpmActivity{.sm_active_pct = 71.5,
                      .sm_occupancy_pct = 33.25,
                      .tensor_active_pct = 48.0,
                      .dram_active_pct = 55.5,
                      .fp64_active_pct = 0.0,
                      .fp32_active_pct = 12.5,
                      .fp16_active_pct = 3.75,
                      .gr_engine_active_pct = 96.0};
  g.nvlink_tx_bytes_per_s = 123456789012ULL;
  g.nvlink_rx_bytes_per_s = 98765432109ULL;
  g.nvlinks = std::vector<NvLink>{{.link = 0,
                                   .active = true,
                                   .version = 4,
                                   .crc_errors_total = 0,
                                   .replay_total = 1,
                                   .recovery_total = 2},
                                  {.link = 17,
                                   .active = false,
                                   .version = 4,
                                   .crc_errors_total = 1234567,
                                   .replay_total = 0,
                                   .recovery_total = 0}};
  g.mig_instances = std::vector<MigInstance>{
      {.gi_id = 1,
       .ci_id = 0,
       .profile = "3g.40gb",
       .uuid = "MIG-1b2c3d4e-5f60-5718-9a0b-1c2d3e4f5a60",
       .mem_total_bytes = 42949672960ULL,
       .mem_used_bytes = 21474836480ULL,
       .gpm = GpmActivity{.sm_active_pct = 50.0,
                          .sm_occupancy_pct = 25.0,
                          .tensor_active_pct = 10.0,
                          .dram_active_pct = 20.0,
                          .fp64_active_pct = 0.0,
                          .fp32_active_pct = 5.0,
                          .fp16_active_pct = 1.0,
                          .gr_engine_active_pct = 80.0}},
      {.gi_id = 5,
       .ci_id = 0,
       .profile = "2g.20gb",
       .uuid = "MIG-aa2c3d4e-5f60-5718-9a0b-1c2d3e4f5a61",
       .mem_total_bytes = 21474836480ULL,
       .mem_used_bytes = 0,
       .gpm = {}}};
  g.enc_util_pct = 0.0;
  g.dec_util_pct = 12.0;
  g.fabric_state = kFabricCompleted;
  return g;
}

inline ProcessSample full_process(uint32_t pid, uint32_t ppid) {
  ProcessSample p;
  p.pid = pid;
  p.ppid = ppid;
  p.user = "alice";
  p.name = "python";
  p.cmdline = "python train.py --bs 256 --data /datasets/imagenet";
  p.state = "R";
  p.cpu_pct = 105.5;
  p.threads = 37;
  p.rss_bytes = 21474836480ULL;
  p.cgroup = "/kubepods/burstable/pod1a2b/3c4d";
  p.libs = {"libcudart.so.12.1.105", "libnccl.so.2.18.3", "libcuda.so.1"};
  p.start_time = 1732260000.37;
  p.dev_shm_bytes = 67108864ULL;
  p.ns_pid = 17;
  p.slurm_job_id = "1234";
  p.pod = ProcessPod{"1a2b3c4d-0000-4000-8000-00000000beef", "ml", "train-0",
                     "main", false};
  return p;
}

// A sample with every field set (no nullopt anywhere).
inline Sample full_sample(double t = 1732262400.123456) {
  Sample s;
  s.t = t;
  s.gpus = {full_gpu_sample(0), full_gpu_sample(1)};
  s.host = HostSample{
      .cpu_util_pct = 41.0,
      .cpu_iowait_pct = 0.5,
      .cpu_steal_pct = 0.0,
      .load1 = 52.1,
      .mem_available_bytes = 812345678901ULL,
      .swap_used_bytes = 4096,
      .swap_in_pages_per_s = 1.5,
      .swap_out_pages_per_s = 2.25,
      .disk_read_bytes_per_s = 12000000,
      .disk_write_bytes_per_s = 300000,
      .disk_busy_pct = 3.0,
      .psi_cpu_some_pct = 12.34,
      .psi_mem_some_pct = 0.01,
      .psi_io_some_pct = 99.99,
      .kernel_lines_unclassified_total = 42,
      .other_cpu_top =
          std::vector<OtherCpuProcess>{
              {5120, "yes", "bob", "k8s-pod:1a2b3c4d-5e6", 99.7},
              {6001, "ffmpeg \"x\" ü", "", "docker:3c4d5e6f7a8b", 12.25}},
      .rdma_ports = std::vector<RdmaPort>{
          {.device = "mlx5_0",
           .port = 1,
           .state = "ACTIVE",
           .phys_state = "LinkUp",
           .rate_gbps = 400,
           .rx_bytes_per_s = 1.2e10,
           .tx_bytes_per_s = 1.1e10,
           .symbol_error_total = 12,
           .link_error_recovery_total = 1,
           .link_downed_total = 2,
           .port_rcv_errors_total = 3,
           .port_xmit_discards_total = 4,
           .port_xmit_wait_total = 18446744073709551615ULL,
           .local_link_integrity_errors_total = 5,
           .excessive_buffer_overrun_errors_total = 6}}};
  s.processes = {full_process(4242, 4100), full_process(4300, 4242)};
  s.processes[1].name = "pt_data_worker";
  s.processes[1].state = "Z";
  s.events = {Event{.kind = "xid",
                    .gpu = 0,
                    .code = 79,
                    .pid = 1234,
                    .text = "NVRM: Xid (PCI:0000:07:00): 79, pid=1234, GPU "
                            "has fallen off the bus.",
                    .severity = "",
                    .pci_address = "0000:07:00.0",
                    .logged_at = 1732276991.25},
              Event{.kind = "pcie_aer",
                    .gpu = 1,
                    .code = 0,
                    .pid = 0,
                    .text = "pcieport 0000:00:03.1: AER: Corrected error "
                            "received: 0000:08:00.0",
                    .severity = "corrected",
                    .pci_address = "0000:08:00.0"}};
  s.device_holders = std::vector<DeviceHolder>{
      {.pid = 4242, .devices = {"nvidia0", "nvidiactl", "nvidia-uvm"}}};
  s.slurm_jobs = {{"1234", "train llm", "alice", "gpu-a"}};
  s.pod_allocations = std::vector<PodAllocation>{
      {0, "GPU-0000", 1, "nvidia.com/gpu", "ml", "train-0", "main"}};
  return s;
}

// A sample where everything optional is unknown: GPUs with only an index, a
// process with only a pid, an event with only a kind.
inline Sample unknown_sample(double t = 1732262401.0) {
  Sample s;
  s.t = t;
  s.gpus.resize(2);
  s.gpus[0].index = 0;
  s.gpus[1].index = 1;
  s.processes.resize(1);
  s.processes[0].pid = 7;
  s.events.resize(1);
  s.events[0].kind = "nvml_error";
  return s;
}

// What `record` writes on a busy 8-GPU node: one training job per GPU, each
// with a data-loader worker.
inline Sample realistic_sample(int n_gpus, int n_processes, double t) {
  Sample s;
  s.t = t;
  for (int i = 0; i < n_gpus; ++i) {
    GpuSample g = full_gpu_sample(i);
    // The node of this benchmark predates MIG, NVLink and GPM fields.
    g.gpm = {};
    g.nvlink_tx_bytes_per_s.reset();
    g.nvlink_rx_bytes_per_s.reset();
    g.nvlinks.reset();
    g.mig_instances.reset();
    g.enc_util_pct.reset();
    g.dec_util_pct.reset();
    g.fabric_state.clear();
    g.clock_event_reasons = std::vector<std::string>{"sw_power_cap"};
    g.processes =
        std::vector<GpuProcess>{{.pid = 10000 + static_cast<uint32_t>(i),
                                 .used_bytes = 68719476736ULL,
                                 .type = "compute"}};
    g.util_pct = 90.0 + (static_cast<int>(t) + i) % 10;
    g.power_w = 250.0 + 0.1 * ((static_cast<int>(t) * 7 + i) % 1000);
    g.energy_mj_total = 912345678ULL + static_cast<uint64_t>(t) * 300000;
    s.gpus.push_back(g);
  }
  s.host = full_sample().host;
  for (int p = 0; p < n_processes; ++p) {
    ProcessSample proc = full_process(10000 + static_cast<uint32_t>(p), 1);
    if (p >= n_gpus) {
      proc.ppid = 10000 + static_cast<uint32_t>(p - n_gpus);
      proc.name = "pt_data_worker";
      proc.libs.clear();
    }
    proc.cpu_pct = 50.0 + (static_cast<int>(t) + p) % 60;
    s.processes.push_back(proc);
  }
  return s;
}

}  // namespace gd::testing
