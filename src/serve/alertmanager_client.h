// Sends alert batches to Alertmanager (API v2) from its own thread, so a
// slow or unreachable Alertmanager never delays collection or scrapes.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "http_client/cancel.h"
#include "http_client/url.h"

namespace gd {

class AlertmanagerClient {
 public:
  // `url` is Alertmanager's base URL (http://host:9093[/prefix]); bodies go
  // to <url>/api/v2/alerts. Throws std::invalid_argument for a URL that is
  // not http(s)://host[:port][/path].
  explicit AlertmanagerClient(const std::string& url);
  ~AlertmanagerClient();
  AlertmanagerClient(const AlertmanagerClient&) = delete;
  AlertmanagerClient& operator=(const AlertmanagerClient&) = delete;

  // Queues one JSON array body; returns at once.
  void post(std::string body);
  // Stops: the post in flight gets a short grace to finish, then is ended
  // (queued ones are dropped), so a dead Alertmanager never holds serve's
  // exit for its whole deadline.
  void stop();

  uint64_t sent() const;
  uint64_t failed() const;

 private:
  void run();

  http::Url url_;
  http::RequestCancel cancel_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  bool stopping_ = false;
  bool posting_ = false;
  uint64_t sent_ = 0, failed_ = 0;
  std::thread thread_;
};

}  // namespace gd
