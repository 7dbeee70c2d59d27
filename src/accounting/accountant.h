// The accounting engine: streams a window of samples (one at a time, so a
// week of a node costs the state of its GPUs and groups, not the samples)
// and tells where each GPU's time and energy went (account.h).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/account.h"
#include "model/sample.h"

namespace gd::accounting {

struct AccountOptions {
  // Samples outside [start, end] are skipped (nullopt: no bound).
  std::optional<double> start, end;
  // Groups kept per dimension; the rest are folded into "other".
  size_t max_groups = 1000;
  // An interval longer than this many times the recent sampling period is
  // a gap: not attributed (gap_judge.h).
  double gap_factor = 4;
  // A held GPU whose util_pct is below this is idle-held.
  double idle_util_pct = 1;
};

// GPU indices accounted: 0..kAccountedGpus-1 (a GPU mask is 64 bits; a
// hostile trace's other indices are skipped).
inline constexpr int kAccountedGpus = 64;
// GPU processes whose group is remembered for attribute().
inline constexpr size_t kPidsRemembered = size_t{1} << 16;

// What add() reads of a sample, so that a reader may leave the rest
// unknown (the history's scan_fields): its time; each GPU's index, lost,
// stale, these numeric fields (by their history metric names, gpu.<name>)
// and its process list; and the host processes' pid, ppid, user, name,
// cmdline, cgroup and start_time (who owns a GPU process).
inline constexpr std::array<std::string_view, 4> kGpuFieldsRead = {
    "util_pct", "power_w", "energy_mj_total", "sm_active_pct"};

class Accountant {
 public:
  Accountant(const TraceHeader& header, AccountOptions options);
  ~Accountant();
  Accountant(const Accountant&) = delete;
  Accountant& operator=(const Accountant&) = delete;
  // Samples in time order (a sample not after the previous one is skipped).
  // `processes_as_before`: the caller knows the sample's processes are
  // those of the sample it added just before (the owners of the GPU
  // processes are then not looked at again).
  void add(const Sample& sample, bool processes_as_before = false);
  // What a finding tells the accountant: its id, severity, pids and span.
  struct FindingSpan {
    std::string id, severity;
    std::vector<uint32_t> pids;
    double start = 0, end = 0;
  };
  // Gives each finding to the groups whose GPU processes it names (after
  // the last add(), before finish()). Pids are remembered up to
  // kPidsRemembered; a finding naming none of them is given to nobody.
  void attribute(const std::vector<FindingSpan>& findings);
  // The groups of `d` (not kGpu) so far, in the order they were first
  // seen, "other" among them; the figures keep growing with add(). For a
  // running total (serve's per-job counters) without spending the report.
  void each_group(Dimension d,
                  const std::function<void(const GroupRow&)>& fn) const;

  // The report of everything added; the accountant is spent after.
  AccountReport finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gd::accounting
