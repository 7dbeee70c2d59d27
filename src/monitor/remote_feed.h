// `top --connect URL`: the same screen fed by a running `gpudoctor serve`
// over its JSON API (GET /api/v1/status: header and latest sample in trace
// format; GET /api/v1/findings: its live diagnosis), polled at serve's own
// interval on this feed's thread with a deadline per request, so an
// operator can watch a node with nothing else installed there.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "http_client/cancel.h"
#include "http_client/client.h"
#include "http_client/url.h"
#include "monitor/feed.h"

namespace gd::monitor {

struct RemoteOptions {
  std::string url;  // http[s]://host[:port][/prefix]
  // Basic auth for a serve started with --web-config; for https, the
  // certificates to trust (serve's own self-signed one, or the CA that
  // signed it) instead of the system's.
  http::Credentials who;
  // 0: serve's own interval (its status reply says it).
  double interval_s = 0;
  // Each request's total deadline: connecting, sending and the whole reply.
  double request_timeout_s = 2;
};

// serve's base URL (http_client/url.h), with no query: requests' paths
// follow its path (a reverse proxy's prefix). Throws std::invalid_argument
// naming what is wrong.
http::Url parse_remote_url(const std::string& url);

class RemoteFeed : public Feed {
 public:
  // Throws std::invalid_argument for a bad URL.
  explicit RemoteFeed(RemoteOptions options);
  ~RemoteFeed() override;

  void start() override;
  // Ends a request in flight at once: never waits on the network.
  void stop() override;

 private:
  void run();
  void poll_once();

  RemoteOptions options_;
  http::Url url_;
  std::shared_ptr<const TraceHeader> header_;
  std::optional<GpuHistory> history_;
  double last_t_ = 0;
  std::shared_ptr<const Sample> sample_;
  std::shared_ptr<const FindingsState> findings_;
  double interval_s_;
  http::RequestCancel cancel_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gd::monitor
