#include "serve/alertmanager_client.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

#include "serve/log.h"

namespace gd {
namespace {

// A batch is a few KiB; more than this many waiting means Alertmanager has
// been unreachable for a long time, and only the newest state matters.
constexpr size_t kMaxQueuedBatches = 64;
// Alertmanager answers in milliseconds; a few seconds bound a dead one.
constexpr time_t kConnectTimeoutS = 3;
constexpr time_t kIoTimeoutS = 5;

}  // namespace

AlertmanagerClient::AlertmanagerClient(const std::string& url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos ||
      (url.compare(0, scheme_end, "http") != 0 &&
       url.compare(0, scheme_end, "https") != 0) ||
      url.size() == scheme_end + 3)
    throw std::invalid_argument("--alertmanager: '" + url +
                                "' is not an http(s)://host[:port] URL");
  const auto path_start = url.find('/', scheme_end + 3);
  scheme_host_port_ = url.substr(0, path_start);
  std::string prefix =
      path_start == std::string::npos ? "" : url.substr(path_start);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  path_ = prefix + "/api/v2/alerts";
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
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
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
  httplib::Client client(scheme_host_port_);
  client.set_connection_timeout(kConnectTimeoutS);
  client.set_read_timeout(kIoTimeoutS);
  client.set_write_timeout(kIoTimeoutS);
  for (;;) {
    std::string body;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      body = std::move(queue_.front());
      queue_.pop_front();
    }
    auto res = client.Post(path_, body, "application/json");
    std::lock_guard lock(mu_);
    if (res && res->status >= 200 && res->status < 300) {
      ++sent_;
    } else {
      ++failed_;
      spdlog::warn("msg=\"alertmanager post failed\" url={} error={}",
                   serve_log::q(scheme_host_port_ + path_),
                   serve_log::q(res ? "HTTP " + std::to_string(res->status)
                                    : httplib::to_string(res.error())));
    }
  }
}

}  // namespace gd
