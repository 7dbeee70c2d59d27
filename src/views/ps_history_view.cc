#include "views/ps_history_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "views/format.h"

namespace gd {

using api::HistorySeries;

namespace {

// The series of `pid` on `gpu` (serve keeps one per GPU a pid is on).
const HistorySeries* series_for(const ProcessHistory& h, uint32_t pid,
                                int gpu) {
  auto it = h.find(pid);
  if (it == h.end() || it->second.empty()) return nullptr;
  for (const auto& s : it->second)
    if (s.gpu && *s.gpu == gpu) return &s;
  return &it->second.front();
}

nlohmann::json history_json(const HistorySeries& s) {
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& p : s.points) pts.push_back({p.first, p.second});
  return pts;
}

}  // namespace

std::string render_ps_history(const std::vector<PsRow>& rows,
                              const ProcessHistory& h,
                              const std::string& since) {
  std::string out;
  for (const auto& r : rows) {
    const auto* s = series_for(h, r.gpu_process.pid, r.gpu);
    if (!s || s->points.empty()) continue;
    std::vector<double> v;
    for (const auto& p : s->points) v.push_back(p.second);
    auto [mn, mx] = std::minmax_element(v.begin(), v.end());
    out += fmt::format("  {:<4} {:<8} {}  {} -> {}  (min {}, max {})\n", r.gpu,
                       r.gpu_process.pid, sparkline(v),
                       human_bytes(static_cast<uint64_t>(v.front())),
                       human_bytes(static_cast<uint64_t>(v.back())),
                       human_bytes(static_cast<uint64_t>(*mn)),
                       human_bytes(static_cast<uint64_t>(*mx)));
  }
  if (out.empty()) return out;
  return fmt::format("\nGPU memory, last {} (from gpudoctor serve):\n", since) +
         out;
}

std::string ps_to_json_with_history(
    const Sample& sample, const std::vector<PsRow>& rows,
    const ProcessHistory& history,
    const std::vector<GpuOrphanHolders>& holders) {
  auto j = nlohmann::json::parse(ps_to_json(sample, rows, holders));
  for (auto& p : j["processes"]) {
    const auto* hs =
        series_for(history, p["pid"].get<uint32_t>(), p["gpu"].get<int>());
    if (hs) p["memory_history"] = history_json(*hs);
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string sparkline(const std::vector<double>& values) {
  static const char* kBars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  if (values.empty()) return {};
  auto [mn, mx] = std::minmax_element(values.begin(), values.end());
  // The bars span at least kMinSpan of the largest magnitude: a process that
  // holds 40 GiB give or take 0.25 GiB reads flat, not as a full swing.
  constexpr double kMinSpan = 0.1;
  const double span =
      std::max(*mx - *mn, kMinSpan * std::max(std::abs(*mx), std::abs(*mn)));
  std::string out;
  for (double v : values) {
    size_t i = span > 0 ? static_cast<size_t>((v - *mn) / span * 7.0 + 0.5) : 0;
    out += kBars[std::min<size_t>(i, 7)];
  }
  return out;
}

}  // namespace gd
