// The one table of diagnosis rules. Each rule lives in rules/<id>.cc and
// exposes its factory here. Order does not matter: findings are sorted by
// severity after all rules ran.
#include "diagnose/rule.h"

namespace gd {

// --- GPU health rules ------------------------------------------------------
// (declare the factory, then add a row to the table below)
std::unique_ptr<Rule> make_gpu_lost_rule();
std::unique_ptr<Rule> make_xid_error_rule();
std::unique_ptr<Rule> make_ecc_uncorrectable_rule();
std::unique_ptr<Rule> make_ecc_reset_required_rule();
std::unique_ptr<Rule> make_thermal_throttling_rule();
std::unique_ptr<Rule> make_power_brake_rule();
std::unique_ptr<Rule> make_power_capping_rule();
std::unique_ptr<Rule> make_pcie_link_degraded_rule();
std::unique_ptr<Rule> make_nvml_driver_mismatch_rule();
std::unique_ptr<Rule> make_persistence_mode_off_rule();
std::unique_ptr<Rule> make_driver_cuda_mismatch_rule();
std::unique_ptr<Rule> make_host_oom_kill_rule();
std::unique_ptr<Rule> make_memory_degrading_rule();
std::unique_ptr<Rule> make_recovery_action_required_rule();
std::unique_ptr<Rule> make_thermal_outlier_rule();
std::unique_ptr<Rule> make_gpu_missing_rule();
std::unique_ptr<Rule> make_pcie_aer_errors_rule();
std::unique_ptr<Rule> make_nvlink_degraded_rule();
std::unique_ptr<Rule> make_rdma_port_down_rule();
std::unique_ptr<Rule> make_rdma_port_degraded_rule();
std::unique_ptr<Rule> make_rdma_errors_rule();

// --- workload rules --------------------------------------------------------
// (declare the factory, then add a row to the table below)
std::unique_ptr<Rule> make_memory_pressure_rule();
std::unique_ptr<Rule> make_memory_leak_rule();
std::unique_ptr<Rule> make_orphaned_memory_rule();
std::unique_ptr<Rule> make_pid_namespace_blind_rule();
std::unique_ptr<Rule> make_input_bound_rule();
std::unique_ptr<Rule> make_io_bound_rule();
std::unique_ptr<Rule> make_host_swapping_rule();
std::unique_ptr<Rule> make_cpu_contention_rule();
std::unique_ptr<Rule> make_gpu_idle_allocated_rule();
std::unique_ptr<Rule> make_gpu_imbalance_rule();
std::unique_ptr<Rule> make_gpu_shared_contention_rule();
std::unique_ptr<Rule> make_dev_shm_small_rule();
std::unique_ptr<Rule> make_low_sm_efficiency_rule();
std::unique_ptr<Rule> make_tensor_cores_unused_rule();
std::unique_ptr<Rule> make_memory_underused_rule();
std::unique_ptr<Rule> make_comm_bound_rule();

const std::vector<RuleEntry>& rule_table() {
  static const std::vector<RuleEntry> table = {
      // --- GPU health rules ---
      {"gpu-lost", make_gpu_lost_rule},
      {"xid-error", make_xid_error_rule},
      {"ecc-uncorrectable", make_ecc_uncorrectable_rule},
      {"ecc-reset-required", make_ecc_reset_required_rule},
      {"thermal-throttling", make_thermal_throttling_rule},
      {"power-brake", make_power_brake_rule},
      {"power-capping", make_power_capping_rule},
      {"pcie-link-degraded", make_pcie_link_degraded_rule},
      {"nvml-driver-mismatch", make_nvml_driver_mismatch_rule},
      {"persistence-mode-off", make_persistence_mode_off_rule},
      {"driver-cuda-mismatch", make_driver_cuda_mismatch_rule},
      {"host-oom-kill", make_host_oom_kill_rule},
      {"memory-degrading", make_memory_degrading_rule},
      {"recovery-action-required", make_recovery_action_required_rule},
      {"thermal-outlier", make_thermal_outlier_rule},
      {"gpu-missing", make_gpu_missing_rule},
      {"pcie-aer-errors", make_pcie_aer_errors_rule},
      {"nvlink-degraded", make_nvlink_degraded_rule},
      {"rdma-port-down", make_rdma_port_down_rule},
      {"rdma-port-degraded", make_rdma_port_degraded_rule},
      {"rdma-errors", make_rdma_errors_rule},
      // --- workload rules ---
      {"memory-pressure", make_memory_pressure_rule},
      {"memory-leak", make_memory_leak_rule},
      {"orphaned-memory", make_orphaned_memory_rule},
      {"pid-namespace-blind", make_pid_namespace_blind_rule},
      {"input-bound", make_input_bound_rule},
      {"io-bound", make_io_bound_rule},
      {"host-swapping", make_host_swapping_rule},
      {"cpu-contention", make_cpu_contention_rule},
      {"gpu-idle-allocated", make_gpu_idle_allocated_rule},
      {"gpu-imbalance", make_gpu_imbalance_rule},
      {"gpu-shared-contention", make_gpu_shared_contention_rule},
      {"dev-shm-small", make_dev_shm_small_rule},
      {"low-sm-efficiency", make_low_sm_efficiency_rule},
      {"tensor-cores-unused", make_tensor_cores_unused_rule},
      {"memory-underused", make_memory_underused_rule},
      {"comm-bound", make_comm_bound_rule},
  };
  return table;
}

}  // namespace gd
