#include "views/status_gpu_health.h"

#include "common/terminal_text.h"

namespace gd {
namespace {

// Every string of a trace or of the driver is untrusted on a terminal.
std::string health_safe(std::string_view text) { return terminal_safe(text); }

}  // namespace

bool read_failed(const GpuSample& s, std::string_view field) {
  for (const auto& f : s.read_errors)
    if (f == field) return true;
  return false;
}

// Lifetime ECC counters and the row remapper, when the GPU reports them
// (nvidia-smi -q's "Aggregate" and "Remapped Rows"); nothing when unknown.
std::string memory_health_lines(const GpuSample& s) {
  std::string out;
  const bool by_location = s.ecc_sram_correctable_aggregate_total ||
                           s.ecc_sram_uncorrectable_aggregate_total ||
                           s.ecc_dram_correctable_aggregate_total ||
                           s.ecc_dram_uncorrectable_aggregate_total;
  if (s.ecc_sbe_aggregate_total || s.ecc_dbe_aggregate_total || by_location ||
      s.ecc_sram_threshold_exceeded) {
    out += fmt::format(
        "     ECC lifetime SBE {} DBE {}",
        value_of(s, "ecc_sbe_aggregate_total", s.ecc_sbe_aggregate_total),
        value_of(s, "ecc_dbe_aggregate_total", s.ecc_dbe_aggregate_total));
    if (by_location)
      out += fmt::format("  SRAM corr {} uncorr {}  DRAM corr {} uncorr {}",
                         value_of(s, "ecc_sram_correctable_aggregate_total",
                                  s.ecc_sram_correctable_aggregate_total),
                         value_of(s, "ecc_sram_uncorrectable_aggregate_total",
                                  s.ecc_sram_uncorrectable_aggregate_total),
                         value_of(s, "ecc_dram_correctable_aggregate_total",
                                  s.ecc_dram_correctable_aggregate_total),
                         value_of(s, "ecc_dram_uncorrectable_aggregate_total",
                                  s.ecc_dram_uncorrectable_aggregate_total));
    if (s.ecc_sram_threshold_exceeded.value_or(false))
      out += "  SRAM ECC THRESHOLD EXCEEDED";
    out += "\n";
  }
  const auto& hist = s.row_remap_histogram;
  if (s.remapped_rows_correctable_total ||
      s.remapped_rows_uncorrectable_total || hist) {
    out += fmt::format("     remapped rows corr {} uncorr {}",
                       value_of(s, "remapped_rows_correctable_total",
                                s.remapped_rows_correctable_total),
                       value_of(s, "remapped_rows_uncorrectable_total",
                                s.remapped_rows_uncorrectable_total));
    if (hist) {
      out += fmt::format(
          "  bank remap availability max {} high {} partial {} low {} none {}",
          hist->max, hist->high, hist->partial, hist->low, hist->none);
      // A bank without spare rows cannot remap its next failing row.
      if (hist->none > 0)
        out += "  (BANKS WITHOUT SPARE ROWS)";
      else if (hist->low > 0 || hist->partial > 0)
        out += "  (spare rows running low)";
    } else if (read_failed(s, "row_remap_histogram")) {
      out += fmt::format("  bank remap availability {}", kReadFailed);
    }
    out += "\n";
  }
  return out;
}

// Highlighted: NVML asks for an action before the GPU is trusted again.
std::string recovery_line(const GpuSample& s) {
  if (s.recovery_action.empty() || s.recovery_action == kRecoveryNone)
    return read_failed(s, "recovery_action")
               ? fmt::format("     recovery action {}\n", kReadFailed)
               : std::string();
  std::string what = health_safe(s.recovery_action);
  if (s.recovery_action == kRecoveryGpuReset)
    what = "GPU RESET (drain the GPU, then nvidia-smi -r)";
  else if (s.recovery_action == kRecoveryNodeReboot)
    what = "NODE REBOOT (drain the node, then reboot)";
  else if (s.recovery_action == kRecoveryDrainP2p)
    what = "DRAIN PEER-TO-PEER TRAFFIC";
  else if (s.recovery_action == kRecoveryDrainAndReset)
    what = "DRAIN AND RESET (stop new work, then reset the GPU)";
  return fmt::format("     !! RECOVERY ACTION REQUIRED: {}\n", what);
}

// Every field whose read failed, by its trace name (ERR! above shows the
// fields of this view; this line names the rest too).
std::string read_errors_line(const GpuSample& s) {
  if (s.read_errors.empty()) return {};
  std::string names;
  for (const auto& f : s.read_errors) {
    if (!names.empty()) names += ", ";
    names += health_safe(f);
  }
  return fmt::format(
      "     {} read failed (not unsupported; NVML returned an error): {}\n",
      kReadFailed, names);
}

}  // namespace gd
