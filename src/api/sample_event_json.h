// The dashboard's live stream (GET /api/v1/events, Server-Sent Events): the
// data line of an "event: sample". It is the sample in trace format without
// the host process list (the page asks /api/v1/processes for that), and per
// GPU the memory no live process owns (used minus what live listed
// processes hold: the driver's reservation, and memory of exited or
// invisible processes). Written by serve once per sample for every open
// stream; read by the dashboard (web/src/app.js) and here, so that the
// tests and the fuzzer hold both ends to one format. The "findings" event
// carries findings_json.h's message.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/sample.h"

namespace gd::api {

struct GpuMemoryShare {
  int gpu = 0;
  uint64_t live_process_bytes = 0;
  uint64_t unowned_bytes = 0;
};

struct SampleEvent {
  Sample sample;
  std::vector<GpuMemoryShare> memory;
};

// Appends {"sample":{...},"memory":[...]} (no newline). Throws TraceError
// for a sample the trace format cannot hold (t not finite).
void append_sample_event_json(std::string& out, const Sample& sample,
                              const std::vector<GpuMemoryShare>& memory);

// Throws std::runtime_error (TraceError for the sample) with one line naming
// what is wrong. At most 1024 memory entries; GPU indices in [0, 1023].
SampleEvent parse_sample_event_json(std::string_view data);

}  // namespace gd::api
