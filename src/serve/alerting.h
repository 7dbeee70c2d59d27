// Continuous alerting over diagnosis findings, Prometheus-style: a finding
// that is present at every evaluation for its `for` duration goes from
// pending to firing; when it is gone it is resolved. Pure logic (no
// threads, no I/O) so it is tested with made-up clocks.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/config.h"
#include "diagnose/rule.h"

namespace gd {

// The [alerting] section of the TOML config (all values in seconds):
//   [alerting]
//   window_s = 60          # samples the rules see at each evaluation
//   evaluate_every_s = 5   # how often the rules run
//   resend_every_s = 60    # firing alerts are re-sent to Alertmanager
//   for_critical_s = 0     # default `for` per severity
//   for_warning_s = 60
//   for_info_s = 300
//   [alerting.for_s]       # per finding id
//   thermal-throttling = 120
struct AlertPolicy {
  // One minute of 1 s samples: long enough for the rules that compare
  // trends (memory-leak, input-bound), short enough to evaluate in ms.
  double window_s = 60;
  // Re-running every rule over the window every 5 s costs little and keeps
  // alerts within seconds of the evidence.
  double evaluate_every_s = 5;
  // Alertmanager forgets alerts whose endsAt passed; re-sending once a
  // minute (Prometheus's default resend delay) keeps them alive.
  double resend_every_s = 60;
  // Critical findings (lost GPU, uncorrectable ECC) are worth a page at
  // once; warnings must hold a minute so one bad sample is not an alert;
  // info findings are advice and wait five minutes.
  double for_critical_s = 0;
  double for_warning_s = 60;
  double for_info_s = 300;
  std::map<std::string, double> for_by_id;

  double for_s(const Finding& f) const;
  // Reads the alerting.* keys of `config` (marking them used).
  static AlertPolicy from_config(const Config& config,
                                 const std::vector<std::string>& keys);
};

struct TrackedAlert {
  std::string key;      // id + gpus: one alert per finding id per GPU set
  Finding finding;      // the latest evidence
  std::string state;    // pending | firing | resolved
  double since = 0;     // first seen (pending) time
  double fired_at = 0;  // when it began firing (0 while pending)
  double resolved_at = 0;
};

class AlertTracker {
 public:
  // One evaluation's findings at time `now`. Returns the alerts that changed
  // to firing or resolved at this evaluation.
  std::vector<TrackedAlert> update(const std::vector<Finding>& findings,
                                   double now, const AlertPolicy& policy);
  // Current alerts (pending and firing), most severe first.
  std::vector<TrackedAlert> active() const;
  std::vector<TrackedAlert> firing() const;

  static std::string key_of(const Finding& f);

 private:
  std::map<std::string, TrackedAlert> alerts_;
};

// Alertmanager API v2 (POST /api/v2/alerts) body for `alerts`: firing ones
// with endsAt = now + 4 * resend interval (so Alertmanager resolves them by
// itself if this daemon dies), resolved ones with endsAt = resolve time.
std::string alertmanager_payload(const std::vector<TrackedAlert>& alerts,
                                 double now, const AlertPolicy& policy,
                                 const std::string& instance,
                                 const std::string& generator_url);

// RFC 3339 UTC with milliseconds: 2024-11-22T10:00:00.000Z.
std::string rfc3339(double unix_s);

}  // namespace gd
