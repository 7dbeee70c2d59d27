// Text and JSON of `gpudoctor watch-leak` (procmgmt/leak_rate.h estimates).
#include "views/leak_view.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "views/text_util.h"

namespace gd::procmgmt {

namespace {
std::string duration_text(double s) {
  if (s < 120) return fmt::format("{:.0f}s", s);
  if (s < 7200) return fmt::format("{:.0f}m", s / 60);
  if (s < 2 * 86400) return fmt::format("{:.1f}h", s / 3600);
  return fmt::format("{:.1f}d", s / 86400);
}
}  // namespace

std::string render_leaks(const std::vector<LeakEstimate>& es, size_t samples) {
  std::string out = fmt::format("{} samples\n", samples);
  out += fmt::format("{:<4} {:<9} {:>10} {:>10} {:>12} {:>14} {:>8}  {}\n",
                     "GPU", "PID", "FIRST", "LAST", "GROWTH", "FULL IN", "SPAN",
                     "VERDICT");
  for (const auto& e : es) {
    std::string growth = e.slope_mib_per_min ? fmt::format("{:+.1f} MiB/min",
                                                           *e.slope_mib_per_min)
                                             : std::string("n/a");
    std::string full =
        e.time_to_full_s ? duration_text(*e.time_to_full_s) : "-";
    std::string verdict = e.ended ? "gone (NVML stopped listing it)"
                          : !e.slope_mib_per_min ? "too few samples"
                          : e.leaking            ? "GROWING: possible leak"
                                                 : "stable";
    out += fmt::format("{:<4} {:<9} {:>10} {:>10} {:>12} {:>14} {:>8}  {}\n",
                       e.gpu, e.pid, bytes_text(e.first_bytes),
                       bytes_text(e.last_bytes), growth, full,
                       duration_text(e.duration_s), verdict);
  }
  if (es.empty()) out += "(no GPU process was seen)\n";
  return out;
}

std::string leaks_to_json(const std::vector<LeakEstimate>& es, size_t samples) {
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

}  // namespace gd::procmgmt
