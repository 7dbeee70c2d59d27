// GET /api/v1/alerts (docs/serve.md): the alert history, each alert that
// fired in [since, until] and when it cleared. Written by serve from its
// store; read by whoever audits a node (and the fuzz harness).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gd::api {

struct AlertEntry {
  std::string id, severity, title, evidence, action;
  std::vector<int> gpus;
  double started_at = 0;              // first seen (pending)
  double fired_at = 0;                // began firing
  std::optional<double> resolved_at;  // null while firing
  std::string ended;                  // "resolved", or "" (null) while firing
};

struct AlertsReply {
  double since = 0, until = 0;
  std::vector<AlertEntry> alerts;
};

std::string alerts_json(const AlertsReply& r);

// Throws std::runtime_error with one line naming what is wrong. Texts are
// cut to 64 KiB; at most 100,000 alerts and 1024 GPUs each.
AlertsReply parse_alerts_json(std::string_view body);

}  // namespace gd::api
