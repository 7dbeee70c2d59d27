// The replies of a `gpudoctor serve` that `top --connect` reads
// (docs/serve.md: /api/v1/status and /api/v1/findings), read by the strict
// readers of api/status_json.h and api/findings_json.h and reduced to what
// top shows.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/rule.h"
#include "model/sample.h"
#include "monitor/frame.h"

namespace gd::monitor {

struct RemoteStatus {
  TraceHeader header;
  std::optional<Sample> sample;  // null before serve's first sample
  double interval_s = 1;
  double collect_duration_s = 0;
  std::string version;
  // Serve accepts kill requests from this client (remote kill opted in).
  bool remote_kill = false;
};

// Throws std::runtime_error with one line naming what is wrong.
RemoteStatus parse_remote_status(std::string_view body);
// Findings in the order serve sends them (sorted again by the caller),
// with the alert state appended to nothing: the strip shows findings.
FindingsState parse_remote_findings(std::string_view body);

}  // namespace gd::monitor
