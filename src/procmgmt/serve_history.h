// GPU memory history of processes from a running `gpudoctor serve`
// (GET /api/v1/history, README "serve"), for `gpudoctor ps`. Absent serve is
// normal: every failure yields an empty result, never an error.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gd::procmgmt {

// How long ps waits for serve, all requests together (connect, send and
// the whole reply): serve is local and answers in milliseconds, so anything
// slower means it is not there, busy, or not serve at all (something else
// on its port that accepts and never answers), and ps must not hang on it.
inline constexpr int kServeTotalDeadlineMs = 300;

struct HistorySeries {
  std::optional<int> gpu;
  std::vector<std::pair<double, double>> points;  // (t, bytes)
};

// Parses the JSON body of /api/v1/history; nullopt when it is not one.
std::optional<std::vector<HistorySeries>> parse_history_json(
    const std::string& body);

// GPU memory of each pid over the last `since` (e.g. "10m") in `step`
// buckets; pids serve knows nothing about are absent. Stops at the first
// failure (serve not running) and at kServeTotalDeadlineMs: pids not asked
// by then are absent. Only http://HOST:PORT URLs are understood.
std::map<uint32_t, std::vector<HistorySeries>> fetch_process_memory_history(
    const std::string& base_url, const std::vector<uint32_t>& pids,
    const std::string& since = "10m", const std::string& step = "30s");

}  // namespace gd::procmgmt
