#include "monitor/serve_history.h"

#include <stdexcept>

#include "http_client/budget.h"
#include "http_client/client.h"

namespace gd::monitor {

namespace {

// A reply larger than this is not a history answer.
constexpr size_t kMaxHistoryReplyBytes = 8 << 20;

// GET `path` (its query included) from serve within what is left of
// `budget`: the body when serve answered 200, "" for another status,
// nullopt when it could not be reached or did not answer in time.
std::optional<std::string> get_within(const http::Url& url,
                                      const std::string& path,
                                      const http::Budget& budget) {
  if (budget.spent()) return std::nullopt;
  http::Request req;
  req.path = path;
  req.total_s = budget.left_s();
  req.max_body_bytes = kMaxHistoryReplyBytes;
  http::RequestCancel never;
  http::Reply r = http::send(url, {}, req, never);
  if (!r.ok) return std::nullopt;
  return r.status == 200 ? std::move(r.body) : std::string();
}

std::optional<http::Url> serve_url(const std::string& base_url) {
  try {
    return http::parse_url(base_url);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<std::string> fetch_from_serve(const std::string& base_url,
                                            const std::string& path) {
  const http::Budget budget(kServeTotalDeadlineMs / 1000.0);
  auto url = serve_url(base_url);
  if (!url) return std::nullopt;
  auto body = get_within(*url, path, budget);
  if (!body || body->empty()) return std::nullopt;  // absent, slow, not 200
  return body;
}

std::map<uint32_t, std::vector<HistorySeries>> fetch_process_memory_history(
    const std::string& base_url, const std::vector<uint32_t>& pids,
    const std::string& since, const std::string& step) {
  std::map<uint32_t, std::vector<HistorySeries>> out;
  if (pids.empty() || base_url.empty()) return out;
  const http::Budget budget(kServeTotalDeadlineMs / 1000.0);
  auto url = serve_url(base_url);
  if (!url) return out;
  for (uint32_t pid : pids) {
    std::string path = "/api/v1/history?" +
                       http::encode_query({{"metric", "process.used_bytes"},
                                           {"pid", std::to_string(pid)},
                                           {"since", since},
                                           {"step", step}});
    auto body = get_within(*url, path, budget);
    if (!body) break;  // not running or too slow: do not wait once per pid
    try {
      auto reply = api::parse_history_json(*body);
      // The single-metric form: its one result.
      if (!reply.multi && !reply.results.front().series.empty())
        out[pid] = std::move(reply.results.front().series);
    } catch (const std::exception&) {
      // Not a history reply (an error body, not serve): nothing for it.
    }
  }
  return out;
}

}  // namespace gd::monitor
