// Strict checks for numeric command-line values, shared by every command.
// CLI11 alone converts integers with strtoull(..., 0): "010" is octal 8,
// "0x10" hex, " 7" and "-1" pass. A pid or GPU index is decimal digits and
// nothing else, and durations go through the one parser of common/.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/duration.h"
#include "common/int_list.h"
#include "common/terminal_text.h"
#include "common/time_point.h"
#include "model/gpu_lookup.h"

namespace gd {

// A point in time, in the one vocabulary of every window flag (--since,
// --until, --start, --end): a duration ago (1h), Unix seconds or a UTC time.
// Named TIME in --help, the man pages and the completions.
inline CLI::Validator time_point_value() {
  return CLI::Validator(
      [](std::string& text) { return check_time_point(text); }, "TIME");
}

// A file that exists, or '-' for stdin. Named FILE, as CLI11's own check.
inline CLI::Validator file_or_stdin() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        return path == "-" ? "" : CLI::ExistingFile(path);
      },
      "FILE");
}

// Digits only (leading zeros allowed and decimal: "010" is 10), in
// [min, max]. Rewrites the text to its canonical decimal form so that
// CLI11's base-0 conversion that follows cannot read it as octal. Attach it
// with ->transform(): ->check() would run it on a copy of the text.
inline CLI::Validator decimal_in(uint64_t min, uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        bool digits = !text.empty() && text.size() <= 20;
        for (char c : text) digits = digits && c >= '0' && c <= '9';
        if (!digits)
          return "'" + text + "' is not a decimal number (digits 0-9 only)";
        size_t first = text.find_first_not_of('0');
        std::string canonical =
            first == std::string::npos ? "0" : text.substr(first);
        bool fits =
            canonical.size() < 20 ||
            (canonical.size() == 20 && canonical <= "18446744073709551615");
        uint64_t v = fits ? std::stoull(canonical) : UINT64_MAX;
        if (!fits || v < min || v > max)
          return "'" + text + "' is out of range " + std::to_string(min) +
                 ".." + std::to_string(max);
        text = canonical;
        return {};
      },
      "UINT");
}

// Largest GPU index accepted anywhere (NVML numbers GPUs from 0; no node has
// anywhere near this many).
inline constexpr uint64_t kMaxGpuIndex = 1023;

// A GPU as every --gpu names it: an index, a UUID, a PCI address or a
// device file (model/gpu_lookup.h). Named GPU.
// An index is checked as every index is (decimal, 0..kMaxGpuIndex).
inline CLI::Validator gpu_name_value() {
  return CLI::Validator(
      [](std::string& name) {
        const bool digits =
            !name.empty() &&
            name.find_first_not_of("0123456789") == std::string::npos;
        if (digits) return decimal_in(0, kMaxGpuIndex)(name);
        return check_gpu_name(name);
      },
      "GPU");
}

// The index of the GPU that `--gpu NAME` names on this host; nullopt for
// "" (no --gpu). An index comes back as it is: each command says in its own
// words that the host lacks it. A UUID, PCI address or device file that is
// no GPU of the host is a usage error listing its GPUs.
inline std::optional<int> gpu_flag_index(const TraceHeader& header,
                                         const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (auto index = gpu_index_of(name)) return index;
  if (auto index = gpu_by_name(header, name)) return index;
  std::string have;
  for (const GpuInfo& g : header.gpus)
    have += (have.empty() ? "" : ", ") + std::to_string(g.index) + " " +
            (g.pci_bus_id.empty() ? g.uuid : g.pci_bus_id);
  throw CLI::ValidationError(
      "--gpu",
      "no GPU '" + terminal_fit(name, 80) + "' here (" +
          (have.empty() ? std::string("no GPU") : "its GPUs: " + have) + ")");
}

// `--gpu 0,GPU-8f1c...,/dev/nvidia3`: each name as gpu_flag_index, in the
// order given, each GPU once; empty (no --gpu) selects every GPU.
inline GpuSelection gpu_flag_indices(const TraceHeader& header,
                                     const std::vector<std::string>& names) {
  GpuSelection out;
  for (const std::string& name : names) {
    auto index = gpu_flag_index(header, name);
    if (index && std::find(out.begin(), out.end(), *index) == out.end())
      out.push_back(*index);
  }
  return out;
}

// The indices of `gpus` that `header` lacks ("9" on a 4-GPU host), for the
// command's own "no GPU 9" error.
inline std::vector<int> gpus_missing(const TraceHeader& header,
                                     const GpuSelection& gpus) {
  std::vector<int> out;
  for (int g : gpus)
    if (!find_gpu_info(header, g)) out.push_back(g);
  return out;
}

// Adds `--gpu LIST` (indices, UUIDs, PCI addresses, device files, comma
// separated) to `cmd`, the one way every command takes it.
inline CLI::Option* add_gpu_list_option(CLI::App& cmd, const std::string& name,
                                        std::vector<std::string>& out,
                                        const std::string& help) {
  return cmd.add_option(name, out, help)
      ->delimiter(',')
      ->check(gpu_name_value());
}

// Linux pid_max is at most 2^22 (PID_MAX_LIMIT).
inline constexpr uint64_t kMaxPid = 4194304;
// MIG GPU instance ids (an A100/H100 hands out ids below 15; NVML's field
// is 32 bits, but no GPU has more than a few dozen).
inline constexpr uint64_t kMaxMigInstanceId = 1023;

// A duration option ("500ms", "10m", ...) in `range`, stored as seconds.
inline CLI::Option* add_duration_option(CLI::App& app, const std::string& name,
                                        double& out, DurationRange range,
                                        const std::string& help) {
  return app
      .add_option_function<std::string>(
          name, [&out](const std::string& text) { out = parse_duration(text); },
          help + " (" + duration_range_text(range) + ")")
      ->check(CLI::Validator(
          [range](std::string& text) -> std::string {
            std::string error;
            auto v = try_parse_duration(text, &error);
            return v ? check_duration_range(text, *v, range) : error;
          },
          "DURATION"));
}

}  // namespace gd
