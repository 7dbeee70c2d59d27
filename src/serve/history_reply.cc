#include "serve/history_reply.h"

#include <algorithm>

#include "api/history_json.h"
#include "store/series_points.h"

namespace gd {

std::vector<std::string> checked_metrics(const HistoryQuery& q) {
  static const std::vector<std::string> known = store::metric_names();
  std::vector<std::string> metrics = q.metrics;
  if (metrics.empty()) metrics.push_back(q.metric);
  for (const auto& m : metrics)
    if (std::find(known.begin(), known.end(), m) == known.end())
      throw HistoryQueryError(
          "unknown metric '" + m +
          "' (gpu.<field>, host.<field>, process.used_bytes, "
          "process.cpu_pct)");
  return metrics;
}

std::string history_reply_json(
    const HistoryQuery& q, const std::vector<std::string>& metrics,
    const std::vector<std::vector<HistorySeries>>& results,
    uint64_t skipped_blocks, std::optional<double> kept_in_memory_s) {
  std::string out;
  api::HistoryJsonWriter w(out, q.since, q.until, q.step, skipped_blocks,
                           q.multi, kept_in_memory_s);
  for (size_t i = 0; i < metrics.size() && i < results.size(); ++i) {
    // The single-metric form has one result: the first metric's.
    if (!q.multi && i > 0) break;
    w.metric(metrics[i]);
    for (const auto& s : results[i]) {
      w.series(s.gpu, s.pid);
      for (const auto& p : s.points) w.point(p.t, p.v);
    }
  }
  w.finish();
  return out;
}

}  // namespace gd
