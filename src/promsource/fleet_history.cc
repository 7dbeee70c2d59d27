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
  if (!(step_s > 0) || !(span_s >= step_s) || !std::isfinite(end))
    return "the history's range or step is not valid";
  const auto steps = static_cast<size_t>(span_s / step_s);
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(deadline_s));
  const std::string late = "the last minutes were not read within " +
                           std::to_string(static_cast<int>(deadline_s)) + " s";
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
    std::string error = ask_batches(ranged, batches, from, to, step_s, deadline,
                                    late, cancel, built);
    if (!error.empty()) return error;
    each_slice(built.finish_history());
  }
  return {};
}

}  // namespace gd::promsource
