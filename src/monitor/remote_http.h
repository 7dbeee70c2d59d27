// The HTTP client of `top --connect` (remote_feed.cc, remote_kill.cc): one
// connection per request to serve, with basic auth and, for https, the
// certificates to trust; and why a request could not be made, in words a
// user can act on.
//
// The server is untrusted: whatever it sends, a request ends by its total
// deadline (connect, TLS, request, headers and body together, not per
// read), its reply's head is bounded in bytes and lines (cpp-httplib 0.11
// bounds neither: endless headers grow its map until memory runs out), the
// body by the caller's content receiver, and another thread can end it at
// once (RequestCancel: the screen's quit never waits on the network).
#pragma once

#include <httplib.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "monitor/remote_feed.h"

namespace gd::monitor {

// A reply's status line and headers: serve's are ~300 bytes in 8 lines.
inline constexpr size_t kMaxReplyHeadBytes = 64 * 1024;
inline constexpr size_t kMaxReplyHeadLines = 100;

// Ends the request in flight, and every later one of its owner, from any
// thread. The requests' sockets are kept here as duplicates while they are
// open, so shutting one down from another thread can never hit a
// descriptor number the process reused meanwhile.
class RequestCancel {
 public:
  RequestCancel() = default;
  ~RequestCancel();
  RequestCancel(const RequestCancel&) = delete;
  RequestCancel& operator=(const RequestCancel&) = delete;

  void cancel();
  bool cancelled() const;

  // For the request in flight (remote_http.cc): keeps a duplicate of its
  // socket (shut down at once when already cancelled), shuts it down, or
  // forgets it.
  void adopt(int fd);
  void shut_down();
  void release();

 private:
  mutable std::mutex mu_;
  bool cancelled_ = false;
  int fd_ = -1;
};

// One request to serve, bounded as above by `total_s`.
struct BoundedReply {
  bool ok = false;    // an HTTP reply came (see res.status)
  std::string error;  // else: "cannot reach URL: why"
};
BoundedReply send_bounded(const RemoteOptions& o, const RemoteUrl& url,
                          double total_s, RequestCancel& cancel,
                          httplib::Request& req, httplib::Response& res);

// "cannot reach URL: why" for a request that got no HTTP answer.
std::string cannot_reach(const RemoteOptions& o, httplib::Error e);

}  // namespace gd::monitor
