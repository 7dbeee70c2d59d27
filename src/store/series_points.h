// The points of history metrics (gpu.<field>, host.<field>,
// process.used_bytes, process.cpu_pct) gathered from whole samples, per
// (GPU, pid), then in time order and averaged per step. The SQLite store
// (history_queries.cc) uses them for samples not yet in a block; serve's
// in-memory history (--no-db) for all of its samples.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/sample.h"
#include "store/history_store.h"

namespace gd::store {

// A parsed metric name.
struct Metric {
  enum Kind { kGpu, kHost, kProcessUsed, kProcessCpu } kind;
  int field = -1;
};

// Collects points per (gpu, pid).
struct SeriesSet {
  std::map<std::pair<int64_t, int64_t>, HistorySeries> by_key;
  void add(std::optional<int> gpu, std::optional<int> pid, double t, double v);
};

// Every metric name parse_metric knows.
std::vector<std::string> metric_names();

// Throws StoreError "WHERE: unknown metric 'NAME' (...)".
Metric parse_metric(const std::string& where, const std::string& name);

// The points of `metric` in one sample, for `gpu` and `pid` (nullopt: all).
void add_points(SeriesSet& set, const Metric& m, std::optional<int> gpu,
                std::optional<int> pid, const Sample& s);

// Averages per step bucket [k*step, (k+1)*step), stamped with the start.
std::vector<HistoryPoint> bucket(const std::vector<HistoryPoint>& points,
                                 double step);

// The set's series, each in time order and, when step > 0, bucketed.
std::vector<HistorySeries> finish_series(SeriesSet& set, double step);

}  // namespace gd::store
