// What the HTTP handlers read: the sampling loop builds a new immutable
// Snapshot after every sample and swaps it in; a handler takes a reference
// (shared_ptr copy under a mutex held for nanoseconds) and never waits on
// collection, NVML or the database.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "diagnose/engine.h"
#include "exporter/metrics_input.h"
#include "model/sample.h"
#include "serve/alerting.h"
#include "serve/shared_value.h"

namespace gd {

struct Snapshot {
  std::shared_ptr<const TraceHeader> header;
  std::shared_ptr<const Sample> sample;  // nullptr before the first sample
  std::vector<GpuCollectHealth> gpu_health;
  std::optional<StoreStatus> store;  // absent without history (--no-db)
  std::map<int, int> last_xid;       // GPU index -> last Xid code seen
  double collect_duration_s = 0;
  uint64_t collections_total = 0;
  uint64_t processes_left_out_total = 0;  // over the process budget
  double started_at = 0;                  // daemon start (Unix seconds)
  double interval_s = 1;
  // Alerting: state after the latest evaluation.
  std::vector<TrackedAlert> alerts;  // pending and firing
  std::optional<double> evaluated_at;
  DiagnoseWindow window;
  // Rules the latest evaluation could not judge, and why: shared, not
  // copied, by the snapshot of every sample until the next evaluation.
  std::shared_ptr<const std::vector<NotJudged>> not_judged;
  AlertPolicy policy;
  std::string version;
  // Each job's GPU time and energy since it got its series (bounded).
  std::vector<ExportedJob> jobs;
};

using SnapshotBox = SharedValue<Snapshot>;

// The MetricsInput view of a snapshot at scrape time `now`.
MetricsInput metrics_input(const Snapshot& s, double now);

}  // namespace gd
