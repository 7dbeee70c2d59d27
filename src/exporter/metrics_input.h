// What one /metrics page is rendered from: the model plus what the serving
// daemon knows about its own collection (health, alert state). Plain data,
// so the exporter has no dependency on how it was collected.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/sample.h"

namespace gd {

// Per header GPU: did the latest collection read it?
struct GpuCollectHealth {
  int index = 0;
  bool success = false;                  // answered in time, not lost
  bool lost = false;                     // NVML says "GPU is lost"
  std::optional<double> last_success_t;  // Unix time of the last good read
};

// One current finding, reduced to its labels; alert_state "" (only a
// finding), "pending" or "firing".
struct ExportedFinding {
  std::string id;
  std::string severity;
  std::vector<int> gpus;  // empty: host-wide
  std::string alert_state;
};

// The history store's writer (`serve --db`), for gpudoctor_store_*.
struct StoreStatus {
  // false: serve refused the history file (a schema version it does not
  // know) and runs without history.
  bool usable = true;
  bool writable = true;
  uint64_t write_errors_total = 0;
  uint64_t pending_bytes = 0;  // encoded history waiting for the disk
  uint64_t dropped_samples_total = 0;
  uint64_t quarantined_total = 0;  // corrupt blocks/batches moved aside
};

// One job's running totals (accounting's JobCounters): a series each, the
// jobs past serve's bound summed as "other".
struct ExportedJob {
  std::string key;   // stable identity ("slurm:1234", "other"); untrusted
  std::string name;  // what a person reads; untrusted
  double held_s = 0, busy_s = 0, idle_held_s = 0, energy_j = 0;
};

struct MetricsInput {
  const TraceHeader* header = nullptr;  // required
  const Sample* sample = nullptr;       // nullptr before the first sample
  std::vector<GpuCollectHealth> gpu_health;
  // GPU index -> the last Xid code seen since the daemon started
  // (DCGM_FI_DEV_XID_ERRORS semantics: value of the last Xid; 0 = none).
  std::map<int, int> last_xid;
  double collect_duration_s = 0;  // of the latest collection
  uint64_t collections_total = 0;
  uint64_t processes_left_out_total = 0;  // over serve's per-sample budget
  std::vector<ExportedFinding> findings;
  // The findings were evaluated at least once (serve's alerting has run):
  // before that, no GPU is called healthy (gpu_health.h).
  bool evaluated = false;
  double now = 0;                    // Unix time of the scrape (for ages)
  std::string version;               // gpudoctor version, for build info
  std::optional<StoreStatus> store;  // absent: serve runs without history
  std::vector<ExportedJob> jobs;     // empty: no job counters
};

}  // namespace gd
