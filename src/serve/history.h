// serve's view of the node history (src/store, gd_store): every sample is
// written to SQLite and /api/v1/history is answered from it as JSON, with
// store failures logged and turned into client-safe messages. Run with
// --no-db there is no history and the API says so with 503.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "exporter/metrics_input.h"
#include "model/sample.h"

namespace gd {

// What a read had to leave out (corrupt blocks).
struct ReadReport;

// A bad query (unknown metric): HTTP 400.
struct HistoryQueryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct HistoryQuery {
  std::string metric;  // the first (or only) metric asked for
  // Every metric asked for (metric=a,b,c): answered in one reply with
  // "results"; `multi` is false for the single-metric form (the reply has
  // "metric" and "series" as before).
  std::vector<std::string> metrics;
  bool multi = false;
  std::optional<int> gpu;
  std::optional<int> pid;
  double since = 0, until = 0, step = 0;
};

// One alert of the alert history: when a finding fired and cleared.
struct AlertRecord {
  std::string key;  // AlertTracker::key_of: id + GPUs
  std::string id, severity, title, evidence, action;
  std::vector<int> gpus;
  double started_at = 0;   // first seen (pending)
  double fired_at = 0;     // began firing
  double resolved_at = 0;  // 0 while firing
};

class History {
 public:
  virtual ~History() = default;
  virtual void set_header(const TraceHeader& header) = 0;
  virtual void append(const Sample& sample) = 0;
  virtual void flush() = 0;
  virtual void maintain(double now) = 0;
  // The /api/v1/history JSON (docs/serve.md). Thread-safe. Throws
  // HistoryQueryError on a bad query, std::runtime_error (with no file
  // path: it goes to the client) when the store fails; the path is logged.
  virtual std::string query_json(const HistoryQuery& q) const = 0;
  // The stored header, and every stored sample of [since, until] in time
  // order until fn returns false (the trace download); see
  // HistoryStore::scan. Throw std::runtime_error when the store fails.
  virtual TraceHeader header() const { return {}; }
  virtual size_t scan(double since, double until,
                      const std::function<bool(Sample&)>& fn,
                      ReadReport* report) const {
    (void)since;
    (void)until;
    (void)fn;
    (void)report;
    return 0;
  }
  // The resolution (seconds between stored points, 0 = every sample) the
  // store keeps for data `age_s` old.
  virtual double stored_step_s(double age_s) const {
    (void)age_s;
    return 0;
  }
  // Alert history: an alert that fired, and later its resolution (same
  // key and started_at). Never throws (a failing disk is logged).
  virtual void record_alert(const AlertRecord& a) { (void)a; }
  // /api/v1/alerts JSON: alerts that overlap [since, until]. Thread-safe;
  // throws std::runtime_error (no file path) when the store fails.
  virtual std::string alerts_json(double since, double until) const {
    (void)since;
    (void)until;
    return "{\"alerts\":[]}";
  }
  // The writer's state for /metrics and /healthz; last_error names the
  // file, so it is for the log only.
  struct Health {
    StoreStatus status;
    std::string last_error;
  };
  virtual Health health() const { return {}; }
  // false for serve --no-db's memory: no store for /healthz and /metrics
  // to report.
  virtual bool on_disk() const { return true; }
};

// Opens (creating parent directories) the store at `path`. Throws
// std::runtime_error "PATH: why"; a history of a schema version this
// gpudoctor does not know is logged and left untouched, and the History
// returned then says so (unusable_history.h).
std::unique_ptr<History> open_history(const std::string& path,
                                      double retention_s);

}  // namespace gd
