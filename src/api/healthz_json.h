// GET /healthz (docs/serve.md): is collection alive, and what is degraded
// (the store, a GPU). Written by serve; read by probes and the fuzz
// harness.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gd::api {

struct HealthStore {
  bool usable = true;
  bool writable = true;
  uint64_t write_errors_total = 0;
  uint64_t pending_bytes = 0;
  uint64_t dropped_samples_total = 0;
  uint64_t quarantined_total = 0;
};

struct Degraded {
  std::string component;   // store | gpu
  std::optional<int> gpu;  // component gpu
  std::string problem;     // "not usable", "lost", "stale", ...
};

struct HealthReply {
  std::string status;  // ok | degraded | starting | stalled
  uint64_t collections_total = 0;
  std::optional<double> sample_age_s;  // absent before the first sample
  std::optional<HealthStore> store;    // absent without history (--no-db)
  std::vector<Degraded> degraded;
};

std::string healthz_json(const HealthReply& r);

// Throws std::runtime_error with one line naming what is wrong: not an
// object, no "status", a field of the wrong type. Texts are cut to 256
// bytes, the degraded list to 4096 entries.
HealthReply parse_healthz_json(std::string_view body);

}  // namespace gd::api
