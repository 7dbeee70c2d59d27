#include "monitor/gpu_history.h"

#include <cmath>
#include <limits>

namespace gd::monitor {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

template <typename T>
float value(const std::optional<T>& v) {
  return v ? static_cast<float>(*v) : kNan;
}

}  // namespace

GpuHistory::GpuHistory(const TraceHeader& header) {
  for (const auto& g : header.gpus) series_.push_back({g.index, {}});
}

void GpuHistory::add(const TraceHeader& header, const Sample& s) {
  for (auto& series : series_) {
    std::array<float, kMetricCount> v;
    v.fill(kNan);
    const GpuSample* g = nullptr;
    for (const auto& x : s.gpus)
      if (x.index == series.index) g = &x;
    if (g && !g->lost && !g->stale) {
      v[static_cast<size_t>(Metric::kUtil)] = value(g->util_pct);
      std::optional<uint64_t> total;
      for (const auto& info : header.gpus)
        if (info.index == series.index) total = info.memory_total_bytes;
      if (g->mem_used_bytes && total && *total > 0)
        v[static_cast<size_t>(Metric::kMemUsed)] =
            static_cast<float>(100.0 * static_cast<double>(*g->mem_used_bytes) /
                               static_cast<double>(*total));
      v[static_cast<size_t>(Metric::kTemp)] = value(g->temp_c);
      v[static_cast<size_t>(Metric::kPower)] = value(g->power_w);
      v[static_cast<size_t>(Metric::kSmClock)] = value(g->sm_clock_mhz);
      v[static_cast<size_t>(Metric::kMemClock)] = value(g->mem_clock_mhz);
      v[static_cast<size_t>(Metric::kPcieTx)] = value(g->pcie_tx_bytes_per_s);
      v[static_cast<size_t>(Metric::kPcieRx)] = value(g->pcie_rx_bytes_per_s);
    }
    for (size_t m = 0; m < kMetricCount; ++m) {
      auto& p = series.points[m];
      if (p.size() >= kCapacity) p.erase(p.begin());
      p.push_back(v[m]);
    }
  }
}

void GpuHistory::clear() {
  for (auto& s : series_)
    for (auto& p : s.points) p.clear();
}

size_t GpuHistory::size() const {
  return series_.empty() ? 0 : series_.front().points[0].size();
}

}  // namespace gd::monitor
