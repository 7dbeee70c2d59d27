// GET /api/v1/status (docs/serve.md): the trace header, the newest sample
// and how collection goes. `top --connect` polls it every second, so the
// writer appends straight to a string (trace/json_out) from the snapshot's
// own objects, copying nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/sample.h"

namespace gd::api {

// Per header GPU: did the latest collection read it?
struct StatusGpu {
  int index = 0;
  bool success = false;
  bool lost = false;
  std::optional<double> last_success_t;
};

struct StatusCollect {
  uint64_t collections_total = 0;
  double collect_duration_s = 0;
  double interval_s = 1;
  double started_at = 0;
  std::string version;
  // serve accepts POST /api/v1/kill (collect.remote_kill).
  bool remote_kill = false;
  std::optional<double> sample_age_s;  // null before the first sample
  std::vector<StatusGpu> gpus;
};

struct StatusReply {
  TraceHeader header;
  std::optional<Sample> sample;  // null before serve's first sample
  StatusCollect collect;
};

// {"header":{...},"sample":{...}|null,"collect":{...}}, the header and
// sample as trace lines write them.
void append_status_json(std::string& out, const TraceHeader& header,
                        const Sample* sample, const StatusCollect& collect);

// Throws std::runtime_error with one line naming what is wrong. A reply
// without "collect" reads as the defaults; strings are cut to a bound, GPUs
// to 1024.
StatusReply parse_status_json(std::string_view body);

}  // namespace gd::api
