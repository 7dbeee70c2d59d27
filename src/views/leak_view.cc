// Text and JSON of `gpudoctor watch-leak` (procmgmt/leak_rate.h estimates).
#include "views/leak_view.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/bytes_text.h"
#include "common/elapsed_text.h"
#include "common/terminal_text.h"

namespace gd {

std::string render_leaks(const std::vector<procmgmt::LeakEstimate>& es,
                         size_t samples) {
  std::string out = fmt::format("{} samples\n", samples);
  out += fmt::format("{:<4} {:<9} {:>10} {:>10} {:>12} {:>14} {:>8}  {}\n",
                     "GPU", "PID", "FIRST", "LAST", "GROWTH", "FULL IN", "SPAN",
                     "VERDICT");
  for (const auto& e : es) {
    std::string growth = e.slope_mib_per_min ? fmt::format("{:+.1f} MiB/min",
                                                           *e.slope_mib_per_min)
                                             : std::string("n/a");
    std::string full =
        e.time_to_full_s ? elapsed_decimal(*e.time_to_full_s) : "-";
    std::string verdict = e.ended ? "gone (NVML stopped listing it)"
                          : !e.slope_mib_per_min ? "too few samples"
                          : e.leaking            ? "GROWING: possible leak"
                                                 : "stable";
    out += fmt::format("{:<4} {:<9} {:>10} {:>10} {:>12} {:>14} {:>8}  {}\n",
                       e.gpu, e.pid, human_bytes_brief(e.first_bytes),
                       human_bytes_brief(e.last_bytes), growth, full,
                       elapsed_decimal(e.duration_s), verdict);
  }
  if (es.empty()) out += "(no GPU process was seen)\n";
  return out;
}

std::string leaks_to_json(const std::vector<procmgmt::LeakEstimate>& es,
                          size_t samples) {
  nlohmann::json arr = nlohmann::json::array();
  auto opt = [](const auto& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
  };
  for (const auto& e : es)
    arr.push_back({{"gpu", e.gpu},
                   {"pid", e.pid},
                   {"points", e.points},
                   {"duration_s", e.duration_s},
                   {"first_bytes", e.first_bytes},
                   {"last_bytes", e.last_bytes},
                   {"min_bytes", e.min_bytes},
                   {"max_bytes", e.max_bytes},
                   {"slope_mib_per_min", opt(e.slope_mib_per_min)},
                   {"gpu_free_bytes", opt(e.gpu_free_bytes)},
                   {"time_to_full_s", opt(e.time_to_full_s)},
                   {"leaking", e.leaking},
                   {"ended", e.ended}});
  return nlohmann::json{{"samples", samples}, {"processes", std::move(arr)}}
      .dump();
}

}  // namespace gd
