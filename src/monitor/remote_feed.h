// `top --connect URL`: the same screen fed by a running `gpudoctor serve`
// over its JSON API (GET /api/v1/status: header and latest sample in trace
// format; GET /api/v1/findings: its live diagnosis), polled at serve's own
// interval on this feed's thread with a deadline per request, so an
// operator can watch a node with nothing else installed there.
#pragma once

#include <condition_variable>
#include <memory>
#include <optional>
#include <thread>

#include "monitor/feed.h"

namespace gd::monitor {

struct RemoteOptions {
  std::string url;  // http[s]://host[:port][/prefix]
  // Basic auth for a serve started with --web-config ("" none).
  std::string user, password;
  // https: PEM certificates to trust (serve's own self-signed one, or the
  // CA that signed it) instead of the system's ("" the system's).
  std::string ca_file;
  double interval_s = 0;  // 0: serve's own interval
  // Each request's total deadline: connecting, sending and the whole reply.
  double request_timeout_s = 2;
};

// The URL split for the HTTP client; throws std::invalid_argument naming
// what is wrong (only http and https, no query, no user info, a port in
// 1..65535).
struct RemoteUrl {
  std::string scheme_host_port;  // "http://127.0.0.1:9856"
  std::string prefix;  // "" or "/gpu07" (reverse proxy), no slash at end
  bool https = false;
  std::string host;  // "127.0.0.1", "::1" (no brackets), "gpu07"
  int port = 0;      // as given, else 80 or 443
};
RemoteUrl parse_remote_url(const std::string& url);

class RequestCancel;  // remote_http.h

class RemoteFeed : public Feed {
 public:
  // Throws std::invalid_argument for a bad URL.
  explicit RemoteFeed(RemoteOptions options);
  ~RemoteFeed() override;

  void start() override;
  // Ends a request in flight at once: never waits on the network.
  void stop() override;

  // Whether serve accepts kill requests from us (its opt-in), as of the
  // last status reply.
  bool remote_kill_allowed() const { return remote_kill_.load(); }

 private:
  void run();
  void poll_once();

  RemoteOptions options_;
  RemoteUrl url_;
  std::shared_ptr<const TraceHeader> header_;
  std::optional<GpuHistory> history_;
  double last_t_ = 0;
  std::shared_ptr<const Sample> sample_;
  std::shared_ptr<const FindingsState> findings_;
  double interval_s_;
  std::atomic<bool> remote_kill_{false};
  std::unique_ptr<RequestCancel> cancel_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gd::monitor
