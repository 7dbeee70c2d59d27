// The HTTP endpoints of `serve`, as plain functions of a snapshot and the
// query parameters (no HTTP library here, so they are unit-tested
// directly). Every error is JSON {"error": "one line"}.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "serve/history.h"
#include "serve/snapshot.h"

namespace gd {

struct ApiReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Extra response headers (the dashboard's caching and encoding headers).
  std::vector<std::pair<std::string, std::string>> headers = {};
  // Bytes that live as long as the program (embedded assets): sent instead
  // of `body`, without a copy.
  std::string_view static_body = {};
  // Bytes a cache shares between replies (the fleet's body, ~7 MB at 2,048
  // nodes): sent instead of `body`, without a copy, and kept until sent.
  std::shared_ptr<const std::string> shared_body = {};
  // What is sent.
  std::string_view text() const {
    if (!static_body.empty()) return static_body;
    if (shared_body) return *shared_body;
    return body;
  }
};

using QueryParams = std::multimap<std::string, std::string>;

ApiReply api_metrics(const Snapshot& s, double now);

// /metrics as api_metrics() answers it, with the part that depends only on
// the snapshot rendered once per snapshot: a page changes once a sample
// (1 s) but may be scraped far more often, and a datacenter node's page
// (8 GPUs x 7 MIG instances, 18 NVLinks each: ~2,700 series, ~480 KB) takes
// ~1 ms to render. Only the sample-age families are rendered per scrape.
// Thread-safe.
class MetricsPageCache {
 public:
  ApiReply reply(const std::shared_ptr<const Snapshot>& s, double now);

 private:
  std::mutex mu_;
  // The snapshot page_ belongs to. A weak_ptr keeps the control block, so a
  // later snapshot can never compare equal to a freed one.
  std::weak_ptr<const Snapshot> of_;
  std::shared_ptr<const std::string> page_;
};
// `remote_kill`: serve accepts POST /api/v1/kill (collect.remote_kill).
ApiReply api_status(const Snapshot& s, double now, bool remote_kill = false);
ApiReply api_processes(const Snapshot& s, const QueryParams& params);
ApiReply api_findings(const Snapshot& s);
// `history` null: 503 (serve runs with --no-db).
ApiReply api_history(const History* history, const QueryParams& params,
                     double now);
// /api/v1/alerts?since=&until=: the alert history (fired and cleared);
// `history` null: 503.
ApiReply api_alerts(const History* history, const QueryParams& params,
                    double now);
// /api/v1/health: each GPU's health (exporter/gpu_health.h), always 200.
ApiReply api_node_health(const Snapshot& s, double now);
// 200 while samples are fresh, 503 when collection has stalled.
ApiReply api_healthz(const Snapshot& s, double now);

ApiReply json_error(int status, const std::string& message);

// The value of parameter `name`, null when absent; throws
// std::invalid_argument when it is given twice.
const std::string* single_param(const QueryParams& params,
                                const std::string& name);
// A non-negative integer parameter; throws std::invalid_argument naming it.
std::optional<int> int_param(const QueryParams& params,
                             const std::string& name);

// since: a duration back from `now` ("10m", "1h", "30s", "2d", "500ms") or
// Unix seconds (a plain number). Throws std::invalid_argument naming the
// text.
double parse_since(const std::string& text, double now);
// step: a duration ("10s") or plain seconds; >= 0.
double parse_step(const std::string& text);
// step=auto: 0 (every sample) when the range fits ~1500 points at the
// stored resolution, else the smallest readable step (5 s, 15 s, 1 min, 10
// min, ...) that is at least the stored resolution `stored_step` and keeps
// the points near 1500.
double auto_step(double since, double until, double now, double stored_step);

}  // namespace gd
