// The one table of checklist checks. Each check lives in checks/<id>.cc and
// exposes its function here; the table order is the printed order (driver
// first, then GPUs, then the host, then the GPU processes).
#include "checklist/checklist.h"

namespace gd {

// (declare the check, then add a row to the table below)
std::vector<CheckItem> check_driver(const CheckContext& ctx);
std::vector<CheckItem> check_kernel_module(const CheckContext& ctx);
std::vector<CheckItem> check_cuda_runtime(const CheckContext& ctx);
std::vector<CheckItem> check_persistence_mode(const CheckContext& ctx);
std::vector<CheckItem> check_ecc_mode(const CheckContext& ctx);
std::vector<CheckItem> check_ecc_pending(const CheckContext& ctx);
std::vector<CheckItem> check_ecc_sram(const CheckContext& ctx);
std::vector<CheckItem> check_row_remap(const CheckContext& ctx);
std::vector<CheckItem> check_recovery_action(const CheckContext& ctx);
std::vector<CheckItem> check_mig_mode(const CheckContext& ctx);
std::vector<CheckItem> check_nvlink(const CheckContext& ctx);
std::vector<CheckItem> check_fabric_manager(const CheckContext& ctx);
std::vector<CheckItem> check_pcie_link(const CheckContext& ctx);
std::vector<CheckItem> check_power_limit(const CheckContext& ctx);
std::vector<CheckItem> check_pcie_acs(const CheckContext& ctx);
std::vector<CheckItem> check_iommu(const CheckContext& ctx);
std::vector<CheckItem> check_swappiness(const CheckContext& ctx);
std::vector<CheckItem> check_transparent_hugepages(const CheckContext& ctx);
std::vector<CheckItem> check_cpu_governor(const CheckContext& ctx);
std::vector<CheckItem> check_memlock_limit(const CheckContext& ctx);
std::vector<CheckItem> check_open_files_limit(const CheckContext& ctx);
std::vector<CheckItem> check_numa_placement(const CheckContext& ctx);
std::vector<CheckItem> check_dev_shm(const CheckContext& ctx);

const std::vector<CheckEntry>& check_table() {
  static const std::vector<CheckEntry> table = {
      // --- driver ---
      {"driver", check_driver},
      {"kernel-module", check_kernel_module},
      {"cuda-runtime", check_cuda_runtime},
      // --- GPUs ---
      {"persistence-mode", check_persistence_mode},
      {"ecc-mode", check_ecc_mode},
      {"ecc-pending", check_ecc_pending},
      {"ecc-sram", check_ecc_sram},
      {"row-remap", check_row_remap},
      {"recovery-action", check_recovery_action},
      {"mig-mode", check_mig_mode},
      {"nvlink", check_nvlink},
      {"fabric-manager", check_fabric_manager},
      {"pcie-link", check_pcie_link},
      {"power-limit", check_power_limit},
      {"pcie-acs", check_pcie_acs},
      {"iommu", check_iommu},
      // --- host ---
      {"swappiness", check_swappiness},
      {"transparent-hugepages", check_transparent_hugepages},
      {"cpu-governor", check_cpu_governor},
      // --- GPU processes ---
      {"memlock-limit", check_memlock_limit},
      {"open-files-limit", check_open_files_limit},
      {"numa-placement", check_numa_placement},
      {"dev-shm", check_dev_shm},
  };
  return table;
}

}  // namespace gd
