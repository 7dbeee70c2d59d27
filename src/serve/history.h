// serve's view of the node history (src/store, gd_store): every sample is
// written to SQLite and /api/v1/history is answered from it as JSON, with
// store failures logged and turned into client-safe messages. Run with
// --no-db there is no history and the API says so with 503.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "exporter/metrics_input.h"
#include "model/sample.h"

namespace gd {

// A bad query (unknown metric): HTTP 400.
struct HistoryQueryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct HistoryQuery {
  std::string metric;
  std::optional<int> gpu;
  std::optional<int> pid;
  double since = 0, until = 0, step = 0;
};

class History {
 public:
  virtual ~History() = default;
  virtual void set_header(const TraceHeader& header) = 0;
  virtual void append(const Sample& sample) = 0;
  virtual void flush() = 0;
  virtual void maintain(double now) = 0;
  // The /api/v1/history JSON (README, "serve"). Thread-safe. Throws
  // HistoryQueryError on a bad query, std::runtime_error (with no file
  // path: it goes to the client) when the store fails; the path is logged.
  virtual std::string query_json(const HistoryQuery& q) const = 0;
  // The writer's state for /metrics and /healthz; last_error names the
  // file, so it is for the log only.
  struct Health {
    StoreStatus status;
    std::string last_error;
  };
  virtual Health health() const { return {}; }
};

// Opens (creating parent directories) the store at `path`. Throws
// std::runtime_error "PATH: why".
std::unique_ptr<History> open_history(const std::string& path,
                                      double retention_s);

}  // namespace gd
