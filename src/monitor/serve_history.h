// History from a running `gpudoctor serve` (docs/serve.md): processes' GPU
// memory (GET /api/v1/history) for `gpudoctor ps`, and any other GET, e.g.
// the recent samples as a trace (/api/v1/export) for a live `diagnose`.
// Absent serve is normal: every failure yields an empty result, never an
// error. The requests go through src/http_client, which only gpudoctor-full
// links: the lean binary hands ps and a live diagnose over to it
// (src/cli/serve_client.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/history_json.h"

namespace gd::monitor {

// How long ps (or diagnose) waits for serve, all requests together (connect,
// send and the whole reply): serve is local and answers in milliseconds, so
// anything slower means it is not there, busy, or not serve at all (something
// else on its port that accepts and never answers), and ps must not hang on it.
inline constexpr int kServeTotalDeadlineMs = 300;

// A series' points are (t, bytes); the reply is read by
// api/history_json.h.
using api::HistorySeries;

// GPU memory of each pid over the last `since` (e.g. "10m") in `step`
// buckets; pids serve knows nothing about are absent. Stops at the first
// failure (serve not running) and at kServeTotalDeadlineMs: pids not asked
// by then are absent. `base_url`: http[s]://host[:port][/prefix].
std::map<uint32_t, std::vector<HistorySeries>> fetch_process_memory_history(
    const std::string& base_url, const std::vector<uint32_t>& pids,
    const std::string& since = "10m", const std::string& step = "30s");

// GET `path` (e.g. "/api/v1/export?since=10m") from serve at `base_url`
// within kServeTotalDeadlineMs: the body when serve answered 200 with one,
// nullopt otherwise (not running, too slow, another status, a reply over
// 8 MiB, not an http(s) URL).
std::optional<std::string> fetch_from_serve(const std::string& base_url,
                                            const std::string& path);

}  // namespace gd::monitor
