// Ends a request in flight (client.h), and every later one of its owner,
// from any thread: a screen's quit or a daemon's stop never waits on the
// network.
#pragma once

#include <mutex>

namespace gd::http {

// The requests' sockets are kept here as duplicates while they are open, so
// shutting one down from another thread can never hit a descriptor number
// the process reused meanwhile.
class RequestCancel {
 public:
  RequestCancel() = default;
  ~RequestCancel();
  RequestCancel(const RequestCancel&) = delete;
  RequestCancel& operator=(const RequestCancel&) = delete;

  void cancel();
  bool cancelled() const;

  // For the request in flight (client.cc): keeps a duplicate of its socket
  // (shut down at once when already cancelled), shuts it down, or forgets
  // it.
  void adopt(int fd);
  void shut_down();
  void release();

 private:
  mutable std::mutex mu_;
  bool cancelled_ = false;
  int fd_ = -1;
};

}  // namespace gd::http
