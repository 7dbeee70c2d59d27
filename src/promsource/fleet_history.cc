#include "promsource/fleet_history.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace gd::promsource {

std::string read_fleet_history(
    const http::prom::Client& client, const std::vector<QueryBatch>& batches,
    double end, double span_s, double step_s, double deadline_s,
    http::RequestCancel& cancel,
    const std::function<void(std::vector<NodeHistory>&&)>& each_slice) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  if (!(step_s > 0) || !(span_s >= step_s) || !std::isfinite(end))
    return "the history's range or step is not valid";
  const auto steps = static_cast<size_t>(span_s / step_s);
  // A slice's points: the round's, once per step.
  const http::prom::Client ranged = client.with_max_points(
      client.limits().max_points * kFleetHistorySliceSteps);
  // Slices end to end from the oldest: steps (first, last] of the grid
  // that ends at `end`.
  for (size_t first = 0; first < steps; first += kFleetHistorySliceSteps) {
    const size_t last = std::min(steps, first + kFleetHistorySliceSteps);
    const double from = end - step_s * static_cast<double>(steps - first - 1);
    const double to = end - step_s * static_cast<double>(steps - last);
    FleetBuilder built(from, to, step_s);
    for (const auto& b : batches) {
      const double left =
          deadline_s - std::chrono::duration<double>(Clock::now() - t0).count();
      if (left < 0.01)
        return "the last minutes were not read within " +
               std::to_string(static_cast<int>(deadline_s)) + " s";
      auto r = ranged.with_deadline(left).query_range(b.query, from, to, step_s,
                                                      cancel);
      if (!r.ok) return std::move(r.error);
      built.add(b, std::move(r.series));
    }
    each_slice(built.finish_history());
  }
  return {};
}

}  // namespace gd::promsource
