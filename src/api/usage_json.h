// GET /api/v1/usage (docs/report.md, "The dashboard's Usage page"): the
// accounting of `gpudoctor report` over a window of serve's history, per
// job, user or container: each group's totals, its GPU-hours held and
// energy per time bucket (for a chart), and the waste by cause (the
// efficiency findings of the window with their share of the group's time).
// Written by serve, read back by the tests (and whoever scripts a node).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gd::api {

// Bounds the query parameters and the reader hold to.
inline constexpr int kUsageMaxBuckets = 240;
inline constexpr int kUsageMaxTop = 20;
inline constexpr size_t kUsageMaxFindings = 16;

struct UsageWaste {
  std::string id, severity;
  double seconds = 0;  // the finding's span within the group's time
  double share = 0;    // seconds / the group's first..last held (0..1)
};

struct UsageGroup {
  std::string key;     // "slurm:1234", "pid:8000@1732262340", "u:alice", ...
  std::string label;   // what a person reads; untrusted text
  bool other = false;  // the groups past the top N (or the accountant's cap)
  size_t groups = 1;   // how many groups this row adds up ("other": several)
  std::vector<int> gpus;
  double first = 0, last = 0;  // first and last interval it held a GPU
  double gpu_hours_held = 0, busy_gpu_hours = 0, idle_held_gpu_hours = 0;
  double energy_kwh = 0;
  // How a shared GPU was split ("sm", "memory", "equal", "sm+memory", "-")
  // and where the energy came from (kWh by the counter, by power x time).
  std::string split;
  double energy_counter_kwh = 0, energy_power_kwh = 0;
  // Per bucket (UsageReply::buckets): GPU-hours held and kWh of the
  // intervals that ended in it; they add up to the totals above.
  std::vector<double> held_series, energy_series;
  std::vector<UsageWaste> waste;  // the most covering first
};

struct UsageNode {
  int gpus = 0;
  double gpu_hours_available = 0, gpu_hours_held = 0, busy_gpu_hours = 0;
  double gpu_hours_unheld = 0, gpu_hours_unattributed = 0;
  double energy_kwh = 0, held_energy_kwh = 0, idle_energy_kwh = 0;
};

struct UsageReply {
  std::string by = "job";       // job | user | container
  double since = 0, until = 0;  // the window asked for
  double start = 0, end = 0;    // its first and last sample (0: none)
  size_t samples = 0;
  double bucket_s = 0;          // each bucket's length
  std::vector<double> buckets;  // each bucket's start (Unix seconds)
  UsageNode node;
  std::vector<UsageGroup> groups;  // by GPU-hours held; "other" last
  size_t groups_total = 0;         // distinct groups in the window
  bool findings = true;  // the window was diagnosed (waste is meaningful)
  double computed_at = 0;
};

std::string usage_json(const UsageReply& r);

// Throws std::runtime_error with one line naming what is wrong. At most
// kUsageMaxBuckets buckets, kUsageMaxTop + 1 groups, kUsageMaxFindings
// waste entries each; texts cut to 4 KiB.
UsageReply parse_usage_json(std::string_view body);

}  // namespace gd::api
