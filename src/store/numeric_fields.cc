#include "store/numeric_fields.h"

#include <cmath>
#include <cstring>

namespace gd::store {

const std::vector<NumericField<GpuSample>>& gpu_fields() {
  using G = GpuSample;
  static const std::vector<NumericField<G>> fields = {
      {"util_pct", &G::util_pct},
      {"mem_util_pct", &G::mem_util_pct},
      {"mem_used_bytes", &G::mem_used_bytes},
      {"temp_c", &G::temp_c},
      {"mem_temp_c", &G::mem_temp_c},
      {"power_w", &G::power_w},
      {"energy_mj_total", &G::energy_mj_total},
      {"fan_pct", &G::fan_pct},
      {"sm_clock_mhz", &G::sm_clock_mhz},
      {"mem_clock_mhz", &G::mem_clock_mhz},
      {"pstate", &G::pstate},
      {"pcie_gen", &G::pcie_gen},
      {"pcie_width", &G::pcie_width},
      {"pcie_tx_bytes_per_s", &G::pcie_tx_bytes_per_s},
      {"pcie_rx_bytes_per_s", &G::pcie_rx_bytes_per_s},
      {"pcie_replay_total", &G::pcie_replay_total},
      {"ecc_sbe_volatile_total", &G::ecc_sbe_volatile_total},
      {"ecc_dbe_volatile_total", &G::ecc_dbe_volatile_total},
      {"retired_pages_pending", &G::retired_pages_pending},
      {"remapped_rows_pending", &G::remapped_rows_pending},
      {"remapped_rows_failure", &G::remapped_rows_failure},
      // Additions to version 1. The row-remap histogram, the recovery
      // action and read_errors are not numbers: they travel in the block's
      // rest blob (block_codec.h).
      {"mem_reserved_bytes", &G::mem_reserved_bytes},
      {"bar1_used_bytes", &G::bar1_used_bytes},
      {"ecc_sbe_aggregate_total", &G::ecc_sbe_aggregate_total},
      {"ecc_dbe_aggregate_total", &G::ecc_dbe_aggregate_total},
      {"ecc_sram_correctable_aggregate_total",
       &G::ecc_sram_correctable_aggregate_total},
      {"ecc_sram_uncorrectable_aggregate_total",
       &G::ecc_sram_uncorrectable_aggregate_total},
      {"ecc_dram_correctable_aggregate_total",
       &G::ecc_dram_correctable_aggregate_total},
      {"ecc_dram_uncorrectable_aggregate_total",
       &G::ecc_dram_uncorrectable_aggregate_total},
      {"ecc_sram_correctable_volatile_total",
       &G::ecc_sram_correctable_volatile_total},
      {"ecc_sram_uncorrectable_volatile_total",
       &G::ecc_sram_uncorrectable_volatile_total},
      {"ecc_dram_correctable_volatile_total",
       &G::ecc_dram_correctable_volatile_total},
      {"ecc_dram_uncorrectable_volatile_total",
       &G::ecc_dram_uncorrectable_volatile_total},
      {"ecc_sram_threshold_exceeded", &G::ecc_sram_threshold_exceeded},
      {"remapped_rows_correctable_total", &G::remapped_rows_correctable_total},
      {"remapped_rows_uncorrectable_total",
       &G::remapped_rows_uncorrectable_total},
      {"temp_limit_margin_c", &G::temp_limit_margin_c},
      // Datacenter GPUs (GPM activity, NVLink throughput, video engines).
      // NVLink links, MIG instances, per-process utilisation and the fabric
      // state are not single numbers: they travel in the rest blob.
      {"sm_active_pct", GpmFieldRef<G>{&G::gpm, &GpmActivity::sm_active_pct}},
      {"sm_occupancy_pct",
       GpmFieldRef<G>{&G::gpm, &GpmActivity::sm_occupancy_pct}},
      {"tensor_active_pct",
       GpmFieldRef<G>{&G::gpm, &GpmActivity::tensor_active_pct}},
      {"dram_active_pct",
       GpmFieldRef<G>{&G::gpm, &GpmActivity::dram_active_pct}},
      {"fp64_active_pct",
       GpmFieldRef<G>{&G::gpm, &GpmActivity::fp64_active_pct}},
      {"fp32_active_pct",
       GpmFieldRef<G>{&G::gpm, &GpmActivity::fp32_active_pct}},
      {"fp16_active_pct",
       GpmFieldRef<G>{&G::gpm, &GpmActivity::fp16_active_pct}},
      {"gr_engine_active_pct",
       GpmFieldRef<G>{&G::gpm, &GpmActivity::gr_engine_active_pct}},
      {"nvlink_tx_bytes_per_s", &G::nvlink_tx_bytes_per_s},
      {"nvlink_rx_bytes_per_s", &G::nvlink_rx_bytes_per_s},
      {"enc_util_pct", &G::enc_util_pct},
      {"dec_util_pct", &G::dec_util_pct},
  };
  return fields;
}

const std::vector<NumericField<HostSample>>& host_fields() {
  using H = HostSample;
  static const std::vector<NumericField<H>> fields = {
      {"cpu_util_pct", &H::cpu_util_pct},
      {"cpu_iowait_pct", &H::cpu_iowait_pct},
      {"cpu_steal_pct", &H::cpu_steal_pct},
      {"load1", &H::load1},
      {"mem_available_bytes", &H::mem_available_bytes},
      {"swap_used_bytes", &H::swap_used_bytes},
      {"swap_in_pages_per_s", &H::swap_in_pages_per_s},
      {"swap_out_pages_per_s", &H::swap_out_pages_per_s},
      {"disk_read_bytes_per_s", &H::disk_read_bytes_per_s},
      {"disk_write_bytes_per_s", &H::disk_write_bytes_per_s},
      {"disk_busy_pct", &H::disk_busy_pct},
      {"psi_cpu_some_pct", &H::psi_cpu_some_pct},
      {"psi_mem_some_pct", &H::psi_mem_some_pct},
      {"psi_io_some_pct", &H::psi_io_some_pct},
      {"kernel_lines_unclassified_total", &H::kernel_lines_unclassified_total},
  };
  return fields;
}

namespace {
template <typename S>
int find_field(const std::vector<NumericField<S>>& fields,
               std::string_view name) {
  for (size_t i = 0; i < fields.size(); ++i)
    if (name == fields[i].name) return static_cast<int>(i);
  return -1;
}
}  // namespace

int find_gpu_field(std::string_view name) {
  return find_field(gpu_fields(), name);
}
int find_host_field(std::string_view name) {
  return find_field(host_fields(), name);
}

double Cell::as_double() const {
  return is_double ? d : static_cast<double>(i);
}

template <typename S>
void set_cell(S& s, const NumericField<S>& f, const Cell& c) {
  std::visit(
      [&](const auto& member) { assign_cell(field_value(s, member), c); },
      f.member);
}

template void set_cell<GpuSample>(GpuSample&, const NumericField<GpuSample>&,
                                  const Cell&);
template void set_cell<HostSample>(HostSample&, const NumericField<HostSample>&,
                                   const Cell&);

}  // namespace gd::store
