// serve's drain with brakes (serve --slurm-drain): when a critical hardware
// finding appears, drain this Slurm node with a reason naming it; never
// more than once per period, never a node that is already drained or down
// or whose reason someone else set, and resume (--slurm-resume) only a
// drain serve made itself once the finding has cleared. Pure logic over a
// SlurmNodeControl, driven with made-up clocks in tests.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/rule.h"
#include "model/sample.h"
#include "serve/slurm_node.h"

namespace gd {

// The findings that drain a node: critical hardware ones (the ids `check`
// treats as unhealthy). A finding drains only when its severity is
// critical (xid-error and nvlink-degraded are not always). In order of
// preference for the reason when several are present.
struct SlurmDrainId {
  const char* id;
  const char* what;  // the reason's words ("" for xid-error: its code)
};
inline constexpr SlurmDrainId kSlurmDrainIds[] = {
    {"xid-error", ""},
    {"gpu-lost", "fell off the bus"},
    {"gpu-missing", "missing from NVML"},
    {"recovery-action-required", "recovery action required"},
    {"ecc-uncorrectable", "uncorrectable ECC errors"},
    {"memory-degrading", "memory degrading"},
    {"nvml-driver-mismatch", "NVML/driver version mismatch"},
    {"nvlink-degraded", "NVLink degraded"},
    {"power-brake", "hardware power brake"},
};

// Slurm keeps reasons of any length; the interface caps ours at this.
inline constexpr size_t kSlurmReasonMax = 200;

struct SlurmDrainCandidate {
  std::string key;  // finding id + GPUs (AlertTracker::key_of)
  std::string id;
  std::string
      reason;  // "gpudoctor: GPU 2 00000000:2C:00.0 Xid 79 (...) 06:10:11"
};

// The drain-worthy finding to name, nullopt when none is present: the
// first of kSlurmDrainIds order, then the lowest GPU. Its reason:
// "gpudoctor: GPU N <pci> <what> <HH:MM:SS UTC of the finding's start>"
// ("gpudoctor: host <what> ..." for a host-wide one), printable ASCII, at
// most kSlurmReasonMax bytes.
std::optional<SlurmDrainCandidate> slurm_drain_candidate(
    const std::vector<Finding>& findings, const TraceHeader& header);

struct SlurmDrainConfig {
  std::string node;
  double period_s = 3600;  // at most one drain per period
  bool resume = false;     // --slurm-resume
};

// One decision, for the log, /metrics and GET /api/v1/slurm/actions.
struct SlurmAction {
  double t = 0;
  std::string action;  // drain | resume
  // drain: drained, already_unavailable, reason_set_by_other, rate_limited,
  //        failed; resume: resumed, not_ours, not_enabled, failed.
  std::string result;
  std::string finding;  // the finding's id ("" for a resume)
  std::string reason;   // the reason serve set or would have set
  std::string detail;   // node state seen, the error
};

class SlurmDrainBrakes {
 public:
  // Actions kept for the API.
  static constexpr size_t kKeptActions = 100;

  SlurmDrainBrakes(SlurmDrainConfig config, SlurmNodeControl& control);

  // One evaluation at `now` with its drain-worthy finding (nullopt: none).
  // Calls Slurm only when something may be done. Returns the actions
  // decided now: each decision once, not at every evaluation it repeats.
  std::vector<SlurmAction> step(const std::optional<SlurmDrainCandidate>& worst,
                                double now);

  const std::deque<SlurmAction>& actions() const { return actions_; }
  // result -> count, per action.
  const std::map<std::string, uint64_t>& drains() const { return drains_; }
  const std::map<std::string, uint64_t>& resumes() const { return resumes_; }
  // The reason of the drain serve made and still owns, if any.
  const std::optional<std::string>& own_reason() const { return own_reason_; }

 private:
  void record(std::vector<SlurmAction>& out, SlurmAction a,
              const std::string& once_key);
  void step_present(const SlurmDrainCandidate& c, double now,
                    std::vector<SlurmAction>& out);
  void step_cleared(double now, std::vector<SlurmAction>& out);

  SlurmDrainConfig config_;
  SlurmNodeControl& control_;
  std::optional<std::string> own_reason_;  // the drain serve made
  std::optional<double> last_drain_at_;
  std::string reported_;  // the decision last reported (not repeated)
  // The finding last looked at within the period (not looked at again).
  std::string quiet_key_;
  double next_check_at_ = 0;
  std::deque<SlurmAction> actions_;
  std::map<std::string, uint64_t> drains_, resumes_;
};

}  // namespace gd
