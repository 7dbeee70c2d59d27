// GET /api/v1/usage: where the GPU-hours and the energy of a window of
// serve's history went, per job, user or container (the dashboard's Usage
// page). The same accounting as `gpudoctor report --db --findings` (one
// pass over the history feeds the accountant and the diagnosis), plus each
// group's GPU-hours and energy per time bucket; the top groups by
// GPU-hours held, the rest added up in "other".
#pragma once

#include <deque>
#include <mutex>
#include <string>

#include "accounting/account.h"
#include "api/usage_json.h"
#include "serve/api.h"
#include "serve/history.h"

namespace gd {

struct UsageQuery {
  accounting::Dimension by = accounting::Dimension::kJob;
  double since = 0, until = 0;
  int buckets = 48;  // 1..api::kUsageMaxBuckets
  int top = 8;       // 1..api::kUsageMaxTop
};

// The longest window one request may account (a week of an 8-GPU node at
// 1 Hz is some 20 s of a core).
inline constexpr double kUsageMaxRangeS = 7 * 86400.0;

// since= (default 24h), until= (default now), by=job|user|container,
// buckets=1..240 (default 48), top=1..20 (default 8). Throws
// std::invalid_argument with one line naming the parameter.
UsageQuery parse_usage_query(const QueryParams& params, double now);

// The accounting of [q.since, q.until] of `history`. Throws what the
// history's scan throws (a store failure: std::runtime_error).
api::UsageReply compute_usage(const History& history, const UsageQuery& q,
                              double now);

// The whole endpoint: 503 without a usable history, 400 for a bad
// parameter, else the reply's JSON.
ApiReply api_usage(const History* history, const QueryParams& params,
                   double now);

// api_usage() with its replies kept for kTtlS per query (a dashboard
// reloads the page; each viewer's refresh would scan the history again).
// Thread-safe; at most kEntries replies kept.
class UsageCache {
 public:
  ApiReply reply(const History* history, const QueryParams& params, double now);

  static constexpr double kTtlS = 30;
  static constexpr size_t kEntries = 8;

 private:
  struct Entry {
    std::string key;
    double at = 0;
    ApiReply reply;
  };
  std::mutex mu_;
  std::deque<Entry> entries_;  // newest first
};

}  // namespace gd
