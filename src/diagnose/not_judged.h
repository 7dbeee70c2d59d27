// The words of Rule::not_judged(), so every rule says alike what it needs
// and what the window had (findings.md "not_judged").
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/elapsed_text.h"
#include "model/sample.h"

namespace gd {

// "needs 5 min of one process's GPU memory; the window has 15 s".
inline std::string needs_time(std::string_view what, double need_s,
                              double have_s) {
  return fmt::format("needs {} of {}; the window has {}", elapsed_words(need_s),
                     what, elapsed_words(have_s));
}

// "needs 30 samples of a GPU job; the window has 15".
inline std::string needs_samples(std::string_view what, double need,
                                 size_t have) {
  return fmt::format("needs {:.0f} samples of {}; the window has {}", need,
                     what, have);
}

// A rule that lives on kernel-log lines cannot judge a window whose log was
// not read: "needs the kernel log's PCIe AER lines; cannot open /dev/kmsg:
// Operation not permitted (...)". nullopt when the log was read (or the
// trace does not say).
inline std::optional<std::string> needs_kernel_log(const TraceHeader& header,
                                                   std::string_view lines) {
  if (header.kernel_log_error.empty()) return std::nullopt;
  return fmt::format("needs the kernel log's {} lines; {}", lines,
                     header.kernel_log_error);
}

// "needs the GPUs' clock event reasons; the driver gave none in 15 readings".
inline std::string needs_field(std::string_view what, size_t readings) {
  return fmt::format("needs {}; the driver gave none in {} reading{}", what,
                     readings, readings == 1 ? "" : "s");
}

// Counts the GPU readings that came with NVML's process list. A rule that
// judges GPU processes cannot judge a window where no reading had one (a
// driver that does not give it, or a trace read from an exporter's series,
// which carry no processes).
class ProcessListsSeen {
 public:
  void add(const Sample& s) {
    for (const GpuSample& g : s.gpus) {
      if (g.lost || g.stale) continue;
      ++readings_;
      if (g.processes) ++with_list_;
    }
  }
  std::optional<std::string> not_judged() const {
    if (readings_ == 0 || with_list_ > 0) return std::nullopt;
    return fmt::format(
        "needs the GPUs' process lists (as gpudoctor record and serve keep "
        "them); none came with the {} GPU reading{}",
        readings_, readings_ == 1 ? "" : "s");
  }

 private:
  size_t readings_ = 0, with_list_ = 0;
};

}  // namespace gd
