#include "store/series_points.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "store/downsample.h"
#include "store/numeric_fields.h"

namespace gd::store {

void SeriesSet::add(std::optional<int> gpu, std::optional<int> pid, double t,
                    double v) {
  auto key = std::make_pair(gpu ? *gpu : -1LL,
                            pid ? static_cast<int64_t>(*pid) : -1LL);
  auto& s = by_key[key];
  s.gpu = gpu;
  s.pid = pid;
  s.points.push_back({t, v});
}

std::vector<std::string> metric_names() {
  std::vector<std::string> out;
  for (const auto& f : gpu_fields())
    out.push_back(std::string("gpu.") + f.name);
  for (const auto& f : host_fields())
    out.push_back(std::string("host.") + f.name);
  out.push_back("process.used_bytes");
  out.push_back("process.cpu_pct");
  return out;
}

Metric parse_metric(const std::string& where, const std::string& name) {
  auto suffix =
      [&](std::string_view prefix) -> std::optional<std::string_view> {
    if (name.size() > prefix.size() &&
        name.compare(0, prefix.size(), prefix) == 0)
      return std::string_view(name).substr(prefix.size());
    return std::nullopt;
  };
  if (auto f = suffix("gpu."); f && store::find_gpu_field(*f) >= 0)
    return {Metric::kGpu, store::find_gpu_field(*f)};
  if (auto f = suffix("host."); f && store::find_host_field(*f) >= 0)
    return {Metric::kHost, store::find_host_field(*f)};
  if (name == "process.used_bytes") return {Metric::kProcessUsed};
  if (name == "process.cpu_pct") return {Metric::kProcessCpu};
  throw StoreError(
      where + ": unknown metric '" + name +
      "' (gpu.<field>, host.<field>, process.used_bytes, process.cpu_pct)");
}

void add_points(SeriesSet& set, const Metric& m, std::optional<int> gpu,
                std::optional<int> pid, const Sample& s) {
  switch (m.kind) {
    case Metric::kGpu:
      for (const auto& g : s.gpus) {
        if (gpu && g.index != *gpu) continue;
        Cell c = store::get_cell(g, store::gpu_fields()[m.field]);
        if (c.present) set.add(g.index, std::nullopt, s.t, c.as_double());
      }
      break;
    case Metric::kHost: {
      Cell c = store::get_cell(s.host, store::host_fields()[m.field]);
      if (c.present) set.add(std::nullopt, std::nullopt, s.t, c.as_double());
      break;
    }
    case Metric::kProcessUsed:
      for (const auto& g : s.gpus) {
        if ((gpu && g.index != *gpu) || !g.processes) continue;
        for (const auto& p : *g.processes)
          if (p.used_bytes && (!pid || static_cast<int64_t>(p.pid) == *pid))
            set.add(g.index, static_cast<int>(p.pid), s.t,
                    static_cast<double>(*p.used_bytes));
      }
      break;
    case Metric::kProcessCpu:
      for (const auto& p : s.processes) {
        if (!p.cpu_pct || (pid && static_cast<int64_t>(p.pid) != *pid))
          continue;
        // The GPU a process is on (first that lists it); a process on no
        // GPU is only reported when asked for by pid.
        std::optional<int> on_gpu;
        for (const auto& g : s.gpus) {
          if (!g.processes) continue;
          for (const auto& gp : *g.processes)
            if (gp.pid == p.pid && (!gpu || g.index == *gpu)) on_gpu = g.index;
          if (on_gpu) break;
        }
        if (gpu && !on_gpu) continue;
        if (!on_gpu && !pid) continue;
        set.add(on_gpu, static_cast<int>(p.pid), s.t, *p.cpu_pct);
      }
      break;
  }
}

std::vector<HistoryPoint> bucket(const std::vector<HistoryPoint>& points,
                                 double step) {
  std::vector<HistoryPoint> out;
  size_t i = 0;
  while (i < points.size()) {
    double b = std::floor(points[i].t / step) * step;
    double sum = 0;
    size_t n = 0;
    while (i < points.size() && std::floor(points[i].t / step) * step == b) {
      sum += points[i].v;
      ++n;
      ++i;
    }
    // Rounded like the stored averages (downsample.h): far below any
    // sensor's resolution, and a shorter answer.
    const double scale = std::pow(10.0, store::kAverageDecimals);
    out.push_back({b, std::round(sum / n * scale) / scale});
  }
  return out;
}

std::vector<HistorySeries> finish_series(SeriesSet& set, double step) {
  std::vector<HistorySeries> out;
  for (auto& [key, series] : set.by_key) {
    std::stable_sort(series.points.begin(), series.points.end(),
                     [](const auto& a, const auto& b) { return a.t < b.t; });
    if (step > 0) series.points = bucket(series.points, step);
    out.push_back(std::move(series));
  }
  return out;
}

}  // namespace gd::store
