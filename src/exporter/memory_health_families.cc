// Native families of a GPU's memory health and read failures (the additions
// to version 1): lifetime ECC counters by type and by location, the row
// remapper's counts and bank histogram, NVML's recovery action, and the
// fields whose read failed. A value the GPU does not report has no series.
#include <set>

#include "exporter/exporter.h"
#include "exporter/family_writer.h"
#include "exporter/gpu_rows.h"

namespace gd {

using prom::FamilyWriter;
using prom::Labels;

// Lifetime ECC counters (by type, and by location where reported), the row
// remapper and the recovery action.
void render_memory_health_families(const std::vector<GpuRow>& rows,
                                   const std::vector<std::string>& labels,
                                   std::string& out) {
  auto typed = [&](size_t i, const char* type) {
    return Labels().add_raw(labels[i]).add("type", type).body();
  };
  auto located = [&](size_t i, const char* location, const char* type) {
    return Labels()
        .add_raw(labels[i])
        .add("location", location)
        .add("type", type)
        .body();
  };
  {
    FamilyWriter f(out, "gpudoctor_ecc_aggregate_errors_total", "counter",
                   "ECC errors over the GPU's lifetime (survive resets), "
                   "single-bit = correctable, double-bit = uncorrectable.");
    for (size_t i = 0; i < rows.size(); ++i) {
      const GpuSample& g = *rows[i].sample;
      f.add_opt(typed(i, "correctable"), g.ecc_sbe_aggregate_total);
      f.add_opt(typed(i, "uncorrectable"), g.ecc_dbe_aggregate_total);
    }
  }
  {
    FamilyWriter f(out, "gpudoctor_ecc_aggregate_errors_by_location_total",
                   "counter",
                   "Lifetime ECC errors by where they happened (sram: on-chip "
                   "caches and register files, dram: device memory).");
    for (size_t i = 0; i < rows.size(); ++i) {
      const GpuSample& g = *rows[i].sample;
      f.add_opt(located(i, "sram", "correctable"),
                g.ecc_sram_correctable_aggregate_total);
      f.add_opt(located(i, "sram", "uncorrectable"),
                g.ecc_sram_uncorrectable_aggregate_total);
      f.add_opt(located(i, "dram", "correctable"),
                g.ecc_dram_correctable_aggregate_total);
      f.add_opt(located(i, "dram", "uncorrectable"),
                g.ecc_dram_uncorrectable_aggregate_total);
    }
  }
  {
    FamilyWriter f(out, "gpudoctor_ecc_volatile_errors_by_location_total",
                   "counter",
                   "ECC errors since the last driver load or GPU reset, by "
                   "location.");
    for (size_t i = 0; i < rows.size(); ++i) {
      const GpuSample& g = *rows[i].sample;
      f.add_opt(located(i, "sram", "correctable"),
                g.ecc_sram_correctable_volatile_total);
      f.add_opt(located(i, "sram", "uncorrectable"),
                g.ecc_sram_uncorrectable_volatile_total);
      f.add_opt(located(i, "dram", "correctable"),
                g.ecc_dram_correctable_volatile_total);
      f.add_opt(located(i, "dram", "uncorrectable"),
                g.ecc_dram_uncorrectable_volatile_total);
    }
  }
  {
    FamilyWriter f(out, "gpudoctor_remapped_rows_total", "counter",
                   "Memory rows remapped to spare rows, by the kind of error "
                   "that caused it.");
    for (size_t i = 0; i < rows.size(); ++i) {
      const GpuSample& g = *rows[i].sample;
      f.add_opt(typed(i, "correctable"), g.remapped_rows_correctable_total);
      f.add_opt(typed(i, "uncorrectable"), g.remapped_rows_uncorrectable_total);
    }
  }
  {
    FamilyWriter f(out, "gpudoctor_row_remap_banks", "gauge",
                   "Memory banks by spare rows left (bank remap availability "
                   "histogram): max, high, partial, low, none.");
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& h = rows[i].sample->row_remap_histogram;
      if (!h) continue;
      const std::pair<const char*, uint32_t> banks[] = {{"max", h->max},
                                                        {"high", h->high},
                                                        {"partial", h->partial},
                                                        {"low", h->low},
                                                        {"none", h->none}};
      for (const auto& [bank, count] : banks)
        f.add(Labels().add_raw(labels[i]).add("bank", bank).body(),
              static_cast<double>(count));
    }
  }
  {
    // An enum: one series per action, 1 for the current one, so an alert
    // is `gpudoctor_gpu_recovery_action{action!="none"} == 1` and a change
    // never leaves a stale series behind.
    FamilyWriter f(out, "gpudoctor_gpu_recovery_action", "gauge",
                   "1 for the recovery action NVML asks for (none, gpu_reset, "
                   "node_reboot, drain_p2p, drain_and_reset), else 0.");
    static constexpr const char* kActions[] = {
        kRecoveryNone, kRecoveryGpuReset, kRecoveryNodeReboot,
        kRecoveryDrainP2p, kRecoveryDrainAndReset};
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string& current = rows[i].sample->recovery_action;
      if (current.empty()) continue;
      bool listed = false;
      for (const char* action : kActions) {
        listed = listed || current == action;
        f.add(Labels().add_raw(labels[i]).add("action", action).body(),
              current == action ? 1.0 : 0.0);
      }
      if (!listed)  // a value newer than this list: still shown, capped
        f.add(
            Labels().add_raw(labels[i]).add_untrusted("action", current).body(),
            1.0);
    }
  }
}

// nvidia-smi's ERR!: one series per field whose latest read failed.
void render_read_error_family(const std::vector<GpuRow>& rows,
                              const std::vector<std::string>& labels,
                              std::string& out) {
  FamilyWriter f(out, "gpudoctor_gpu_read_failed", "gauge",
                 "1 for each field (trace name) whose read failed in the "
                 "latest sample (a failure, not an unsupported field).");
  for (size_t i = 0; i < rows.size(); ++i) {
    std::set<std::string> fields(rows[i].sample->read_errors.begin(),
                                 rows[i].sample->read_errors.end());
    for (const auto& field : fields)
      f.add(Labels().add_raw(labels[i]).add_untrusted("field", field).body(),
            1.0);
  }
}

}  // namespace gd
