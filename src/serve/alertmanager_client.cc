#include "serve/alertmanager_client.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <stdexcept>

#include "http_client/client.h"
#include "serve/log.h"

namespace gd {
namespace {

// A batch is a few KiB; more than this many waiting means Alertmanager has
// been unreachable for a long time, and only the newest state matters.
constexpr size_t kMaxQueuedBatches = 64;
// Alertmanager answers in milliseconds; a few seconds bound a dead one
// (the whole post: connecting, sending and its reply).
constexpr double kPostDeadlineS = 8;
// How long stop() lets a post in flight finish (Alertmanager answers in
// milliseconds) before it ends it.
constexpr auto kStopGrace = std::chrono::milliseconds(500);
// Its reply is an empty body or a short error.
constexpr size_t kMaxReplyBytes = 64 * 1024;

// The base URL, with no query (bodies go to a path under it).
http::Url base_url(const std::string& url) {
  try {
    http::Url u = http::parse_url(url);
    if (url.find('?') != std::string::npos)
      throw std::invalid_argument("'" + url.substr(0, 200) +
                                  "': a query is not expected");
    return u;
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--alertmanager: ") + e.what());
  }
}

}  // namespace

AlertmanagerClient::AlertmanagerClient(const std::string& url)
    : url_(base_url(url)) {
  thread_ = std::thread([this] { run(); });
}

AlertmanagerClient::~AlertmanagerClient() { stop(); }

void AlertmanagerClient::post(std::string body) {
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= kMaxQueuedBatches) queue_.pop_front();
    queue_.push_back(std::move(body));
  }
  cv_.notify_one();
}

void AlertmanagerClient::stop() {
  {
    std::unique_lock lock(mu_);
    stopping_ = true;
    cv_.notify_all();
    cv_.wait_for(lock, kStopGrace, [&] { return !posting_; });
  }
  cancel_.cancel();
  if (thread_.joinable()) thread_.join();
}

uint64_t AlertmanagerClient::sent() const {
  std::lock_guard lock(mu_);
  return sent_;
}

uint64_t AlertmanagerClient::failed() const {
  std::lock_guard lock(mu_);
  return failed_;
}

void AlertmanagerClient::run() {
  for (;;) {
    http::Request req;
    req.method = "POST";
    req.path = "/api/v2/alerts";
    req.content_type = "application/json";
    req.total_s = kPostDeadlineS;
    req.max_body_bytes = kMaxReplyBytes;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      req.body = std::move(queue_.front());
      queue_.pop_front();
      posting_ = true;
    }
    http::Reply res = http::send(url_, {}, req, cancel_);
    std::lock_guard lock(mu_);
    posting_ = false;
    cv_.notify_all();
    if (res.ok && res.status >= 200 && res.status < 300) {
      ++sent_;
    } else if (!stopping_) {
      ++failed_;
      spdlog::warn("msg=\"alertmanager post failed\" url={} error={}",
                   serve_log::q(url_.text),
                   serve_log::q(res.ok ? "HTTP " + std::to_string(res.status)
                                       : res.error));
    }
  }
}

}  // namespace gd
