// GET /api/v1/history (docs/serve.md): stored series of one metric
// ({"metric":..,"series":[..]}) or of several (metric=a,b: {"results":
// [{"metric":..,"series":[..]},..]}). Written by serve from the store, read
// by `ps` (the GPU memory of each process) through monitor/serve_history.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gd::api {

struct HistorySeries {
  std::optional<int> gpu;
  std::optional<int> pid;
  std::vector<std::pair<double, double>> points;  // (t, value)
};

struct HistoryResult {
  std::string metric;
  std::vector<HistorySeries> series;
};

struct HistoryReply {
  double since = 0, until = 0, step = 0;
  uint64_t skipped_blocks = 0;  // corrupt blocks the read left out
  // The form of several metrics ("results"); false: one metric, and
  // `results` holds exactly one.
  bool multi = false;
  std::vector<HistoryResult> results;
};

// Writes a reply piece by piece, straight from the store's series: a day
// of 8 GPUs is ~100k points, and a copy (or a JSON tree) of them costs more
// than the query. Calls: metric(), then series() and its point()s, for each
// metric; then finish().
class HistoryJsonWriter {
 public:
  // `kept_in_memory_s`: the history is serve --no-db's last minutes in
  // memory, this many seconds at most ("kept_in_memory_s" in the reply).
  HistoryJsonWriter(std::string& out, double since, double until, double step,
                    uint64_t skipped_blocks, bool multi,
                    std::optional<double> kept_in_memory_s = std::nullopt);
  void metric(std::string_view name);
  void series(std::optional<int> gpu, std::optional<int> pid);
  void point(double t, double v);
  void finish();

 private:
  void close_series();

  std::string& out_;
  bool multi_;
  size_t metrics_ = 0;
  size_t series_ = 0;  // of the current metric
  size_t points_ = 0;  // of the current series
};

std::string history_json(const HistoryReply& r);

// Throws std::runtime_error with one line naming what is wrong: not an
// object, neither "series" nor "results", a point that is not [t, v], a GPU
// or pid out of range, more than 64 metrics, 4096 series or 1,000,000
// points in all.
HistoryReply parse_history_json(std::string_view body);

}  // namespace gd::api
