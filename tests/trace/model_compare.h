// Field-by-field comparison of model values, reporting which field differs.
#pragma once

#include <gtest/gtest.h>

#include "model/sample.h"

namespace gd::testing {

inline void expect_same(const GpuProcess& a, const GpuProcess& b) {
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.used_bytes, b.used_bytes);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.sm_util_pct, b.sm_util_pct);
  EXPECT_EQ(a.mem_util_pct, b.mem_util_pct);
  EXPECT_EQ(a.gi_id, b.gi_id);
  EXPECT_EQ(a.ci_id, b.ci_id);
}

inline void expect_same(const GpuSample& a, const GpuSample& b) {
  SCOPED_TRACE("gpu " + std::to_string(a.index));
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.lost, b.lost);
  EXPECT_EQ(a.stale, b.stale);
  EXPECT_EQ(a.util_pct, b.util_pct);
  EXPECT_EQ(a.mem_util_pct, b.mem_util_pct);
  EXPECT_EQ(a.mem_used_bytes, b.mem_used_bytes);
  EXPECT_EQ(a.temp_c, b.temp_c);
  EXPECT_EQ(a.mem_temp_c, b.mem_temp_c);
  EXPECT_EQ(a.power_w, b.power_w);
  EXPECT_EQ(a.energy_mj_total, b.energy_mj_total);
  EXPECT_EQ(a.fan_pct, b.fan_pct);
  EXPECT_EQ(a.sm_clock_mhz, b.sm_clock_mhz);
  EXPECT_EQ(a.mem_clock_mhz, b.mem_clock_mhz);
  EXPECT_EQ(a.pstate, b.pstate);
  EXPECT_EQ(a.clock_event_reasons, b.clock_event_reasons);
  EXPECT_EQ(a.pcie_gen, b.pcie_gen);
  EXPECT_EQ(a.pcie_width, b.pcie_width);
  EXPECT_EQ(a.pcie_tx_bytes_per_s, b.pcie_tx_bytes_per_s);
  EXPECT_EQ(a.pcie_rx_bytes_per_s, b.pcie_rx_bytes_per_s);
  EXPECT_EQ(a.pcie_replay_total, b.pcie_replay_total);
  EXPECT_EQ(a.ecc_sbe_volatile_total, b.ecc_sbe_volatile_total);
  EXPECT_EQ(a.ecc_dbe_volatile_total, b.ecc_dbe_volatile_total);
  EXPECT_EQ(a.retired_pages_pending, b.retired_pages_pending);
  EXPECT_EQ(a.remapped_rows_pending, b.remapped_rows_pending);
  EXPECT_EQ(a.remapped_rows_failure, b.remapped_rows_failure);
  EXPECT_EQ(a.mem_reserved_bytes, b.mem_reserved_bytes);
  EXPECT_EQ(a.bar1_used_bytes, b.bar1_used_bytes);
  EXPECT_EQ(a.ecc_sbe_aggregate_total, b.ecc_sbe_aggregate_total);
  EXPECT_EQ(a.ecc_dbe_aggregate_total, b.ecc_dbe_aggregate_total);
  EXPECT_EQ(a.ecc_sram_correctable_aggregate_total,
            b.ecc_sram_correctable_aggregate_total);
  EXPECT_EQ(a.ecc_sram_uncorrectable_aggregate_total,
            b.ecc_sram_uncorrectable_aggregate_total);
  EXPECT_EQ(a.ecc_dram_correctable_aggregate_total,
            b.ecc_dram_correctable_aggregate_total);
  EXPECT_EQ(a.ecc_dram_uncorrectable_aggregate_total,
            b.ecc_dram_uncorrectable_aggregate_total);
  EXPECT_EQ(a.ecc_sram_correctable_volatile_total,
            b.ecc_sram_correctable_volatile_total);
  EXPECT_EQ(a.ecc_sram_uncorrectable_volatile_total,
            b.ecc_sram_uncorrectable_volatile_total);
  EXPECT_EQ(a.ecc_dram_correctable_volatile_total,
            b.ecc_dram_correctable_volatile_total);
  EXPECT_EQ(a.ecc_dram_uncorrectable_volatile_total,
            b.ecc_dram_uncorrectable_volatile_total);
  EXPECT_EQ(a.ecc_sram_threshold_exceeded, b.ecc_sram_threshold_exceeded);
  EXPECT_EQ(a.remapped_rows_correctable_total,
            b.remapped_rows_correctable_total);
  EXPECT_EQ(a.remapped_rows_uncorrectable_total,
            b.remapped_rows_uncorrectable_total);
  EXPECT_EQ(a.row_remap_histogram, b.row_remap_histogram);
  EXPECT_EQ(a.recovery_action, b.recovery_action);
  EXPECT_EQ(a.temp_limit_margin_c, b.temp_limit_margin_c);
  EXPECT_EQ(a.read_errors, b.read_errors);
  EXPECT_EQ(a.gpm, b.gpm);
  EXPECT_EQ(a.nvlink_tx_bytes_per_s, b.nvlink_tx_bytes_per_s);
  EXPECT_EQ(a.nvlink_rx_bytes_per_s, b.nvlink_rx_bytes_per_s);
  EXPECT_EQ(a.nvlinks, b.nvlinks);
  EXPECT_EQ(a.mig_instances, b.mig_instances);
  EXPECT_EQ(a.enc_util_pct, b.enc_util_pct);
  EXPECT_EQ(a.dec_util_pct, b.dec_util_pct);
  EXPECT_EQ(a.fabric_state, b.fabric_state);
  ASSERT_EQ(a.processes.has_value(), b.processes.has_value());
  if (a.processes) {
    ASSERT_EQ(a.processes->size(), b.processes->size());
    for (size_t i = 0; i < a.processes->size(); ++i) {
      expect_same((*a.processes)[i], (*b.processes)[i]);
    }
  }
}

inline void expect_same(const HostSample& a, const HostSample& b) {
  EXPECT_EQ(a.cpu_util_pct, b.cpu_util_pct);
  EXPECT_EQ(a.cpu_iowait_pct, b.cpu_iowait_pct);
  EXPECT_EQ(a.cpu_steal_pct, b.cpu_steal_pct);
  EXPECT_EQ(a.load1, b.load1);
  EXPECT_EQ(a.mem_available_bytes, b.mem_available_bytes);
  EXPECT_EQ(a.swap_used_bytes, b.swap_used_bytes);
  EXPECT_EQ(a.swap_in_pages_per_s, b.swap_in_pages_per_s);
  EXPECT_EQ(a.swap_out_pages_per_s, b.swap_out_pages_per_s);
  EXPECT_EQ(a.disk_read_bytes_per_s, b.disk_read_bytes_per_s);
  EXPECT_EQ(a.disk_write_bytes_per_s, b.disk_write_bytes_per_s);
  EXPECT_EQ(a.disk_busy_pct, b.disk_busy_pct);
  EXPECT_EQ(a.psi_cpu_some_pct, b.psi_cpu_some_pct);
  EXPECT_EQ(a.psi_mem_some_pct, b.psi_mem_some_pct);
  EXPECT_EQ(a.psi_io_some_pct, b.psi_io_some_pct);
  EXPECT_EQ(a.kernel_lines_unclassified_total,
            b.kernel_lines_unclassified_total);
  EXPECT_EQ(a.other_cpu_top.has_value(), b.other_cpu_top.has_value());
  if (a.other_cpu_top && b.other_cpu_top) {
    EXPECT_EQ(*a.other_cpu_top, *b.other_cpu_top);
  }
  EXPECT_EQ(a.rdma_ports.has_value(), b.rdma_ports.has_value());
  if (a.rdma_ports && b.rdma_ports) {
    EXPECT_EQ(*a.rdma_ports, *b.rdma_ports);
  }
}

inline void expect_same(const ProcessSample& a, const ProcessSample& b) {
  SCOPED_TRACE("pid " + std::to_string(a.pid));
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.ppid, b.ppid);
  EXPECT_EQ(a.user, b.user);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.cmdline, b.cmdline);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.cpu_pct, b.cpu_pct);
  EXPECT_EQ(a.threads, b.threads);
  EXPECT_EQ(a.rss_bytes, b.rss_bytes);
  EXPECT_EQ(a.cgroup, b.cgroup);
  EXPECT_EQ(a.libs, b.libs);
  EXPECT_EQ(a.start_time, b.start_time);
  EXPECT_EQ(a.dev_shm_bytes, b.dev_shm_bytes);
  EXPECT_EQ(a.ns_pid, b.ns_pid);
  EXPECT_EQ(a.slurm_job_id, b.slurm_job_id);
  EXPECT_EQ(a.pod, b.pod);
}

inline void expect_same(const Event& a, const Event& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.gpu, b.gpu);
  EXPECT_EQ(a.code, b.code);
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.severity, b.severity);
  EXPECT_EQ(a.pci_address, b.pci_address);
  EXPECT_EQ(a.logged_at, b.logged_at);
}

inline void expect_same(const Sample& a, const Sample& b) {
  EXPECT_EQ(a.t, b.t);
  ASSERT_EQ(a.gpus.size(), b.gpus.size());
  for (size_t i = 0; i < a.gpus.size(); ++i) expect_same(a.gpus[i], b.gpus[i]);
  expect_same(a.host, b.host);
  ASSERT_EQ(a.processes.size(), b.processes.size());
  for (size_t i = 0; i < a.processes.size(); ++i) {
    expect_same(a.processes[i], b.processes[i]);
  }
  ASSERT_EQ(a.events.size(), b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i) {
    expect_same(a.events[i], b.events[i]);
  }
  EXPECT_EQ(a.processes_left_out, b.processes_left_out);
  EXPECT_EQ(a.slurm_jobs, b.slurm_jobs);
  EXPECT_EQ(a.pod_allocations, b.pod_allocations);
  ASSERT_EQ(a.device_holders.has_value(), b.device_holders.has_value());
  if (a.device_holders) {
    ASSERT_EQ(a.device_holders->size(), b.device_holders->size());
    for (size_t i = 0; i < a.device_holders->size(); ++i) {
      EXPECT_EQ((*a.device_holders)[i].pid, (*b.device_holders)[i].pid);
      EXPECT_EQ((*a.device_holders)[i].devices, (*b.device_holders)[i].devices);
    }
  }
}

inline void expect_same(const GpuInfo& a, const GpuInfo& b) {
  SCOPED_TRACE("gpu info " + std::to_string(a.index));
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.uuid, b.uuid);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.pci_bus_id, b.pci_bus_id);
  EXPECT_EQ(a.serial, b.serial);
  EXPECT_EQ(a.memory_total_bytes, b.memory_total_bytes);
  EXPECT_EQ(a.power_limit_w, b.power_limit_w);
  EXPECT_EQ(a.power_default_limit_w, b.power_default_limit_w);
  EXPECT_EQ(a.pcie_max_gen, b.pcie_max_gen);
  EXPECT_EQ(a.pcie_max_width, b.pcie_max_width);
  EXPECT_EQ(a.temp_slowdown_c, b.temp_slowdown_c);
  EXPECT_EQ(a.temp_shutdown_c, b.temp_shutdown_c);
  EXPECT_EQ(a.sm_clock_max_mhz, b.sm_clock_max_mhz);
  EXPECT_EQ(a.mem_clock_max_mhz, b.mem_clock_max_mhz);
  EXPECT_EQ(a.compute_capability, b.compute_capability);
  EXPECT_EQ(a.architecture, b.architecture);
  EXPECT_EQ(a.ecc_enabled, b.ecc_enabled);
  EXPECT_EQ(a.mig_enabled, b.mig_enabled);
  EXPECT_EQ(a.persistence_mode, b.persistence_mode);
  EXPECT_EQ(a.compute_mode, b.compute_mode);
  EXPECT_EQ(a.numa_node, b.numa_node);
  EXPECT_EQ(a.minor_number, b.minor_number);
  EXPECT_EQ(a.temp_max_operating_c, b.temp_max_operating_c);
  EXPECT_EQ(a.temp_mem_max_c, b.temp_mem_max_c);
  EXPECT_EQ(a.bar1_total_bytes, b.bar1_total_bytes);
  EXPECT_EQ(a.vbios_version, b.vbios_version);
  EXPECT_EQ(a.nvlink_count, b.nvlink_count);
  EXPECT_EQ(a.mig_profiles, b.mig_profiles);
  EXPECT_EQ(a.mig_enabled_pending, b.mig_enabled_pending);
}

inline void expect_same(const TraceHeader& a, const TraceHeader& b) {
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.host.hostname, b.host.hostname);
  EXPECT_EQ(a.host.kernel, b.host.kernel);
  EXPECT_EQ(a.host.cpu_model, b.host.cpu_model);
  EXPECT_EQ(a.host.cpu_count, b.host.cpu_count);
  EXPECT_EQ(a.host.mem_total_bytes, b.host.mem_total_bytes);
  EXPECT_EQ(a.host.swap_total_bytes, b.host.swap_total_bytes);
  EXPECT_EQ(a.host.pid_namespace, b.host.pid_namespace);
  EXPECT_EQ(a.host.rdma_devices, b.host.rdma_devices);
  EXPECT_EQ(a.nvml_status, b.nvml_status);
  EXPECT_EQ(a.nvml_error, b.nvml_error);
  EXPECT_EQ(a.kernel_log_error, b.kernel_log_error);
  ASSERT_EQ(a.driver.has_value(), b.driver.has_value());
  if (a.driver) {
    EXPECT_EQ(a.driver->driver_version, b.driver->driver_version);
    EXPECT_EQ(a.driver->cuda_driver_version, b.driver->cuda_driver_version);
    EXPECT_EQ(a.driver->nvml_version, b.driver->nvml_version);
    EXPECT_EQ(a.driver->kernel_module_version, b.driver->kernel_module_version);
    EXPECT_EQ(a.driver->library_version, b.driver->library_version);
  }
  ASSERT_EQ(a.gpus.size(), b.gpus.size());
  for (size_t i = 0; i < a.gpus.size(); ++i) expect_same(a.gpus[i], b.gpus[i]);
  EXPECT_EQ(a.faults_json, b.faults_json);
  ASSERT_EQ(a.pci_gpus.has_value(), b.pci_gpus.has_value());
  if (a.pci_gpus) {
    ASSERT_EQ(a.pci_gpus->size(), b.pci_gpus->size());
    for (size_t i = 0; i < a.pci_gpus->size(); ++i) {
      EXPECT_EQ((*a.pci_gpus)[i].address, (*b.pci_gpus)[i].address);
      EXPECT_EQ((*a.pci_gpus)[i].driver, (*b.pci_gpus)[i].driver);
    }
  }
}

}  // namespace gd::testing
