// Inside client.cc: the connection as cpp-httplib reads and writes it, in
// place of its own streams (which wait per read, without a total deadline):
// non-blocking, each wait bounded by what is left of the request's one
// deadline, and the reply's head counted as it is read.
#pragma once

#include <httplib.h>
#include <openssl/ssl.h>
#include <poll.h>

#include <atomic>
#include <chrono>

#include "http_client/cancel.h"

namespace gd::http {

using Clock = std::chrono::steady_clock;

// Why a request was ended on our side (the first reason wins).
enum class Stop { kNone, kDeadline, kCancelled, kHeadTooLarge };

struct Bounds {
  Clock::time_point deadline;
  double total_s = 0;
  RequestCancel* cancel = nullptr;
  std::atomic<Stop> stop{Stop::kNone};

  void end(Stop why);
  // Whether the request is over (ending it at the deadline or on a cancel).
  bool ended();
};

class BoundedStream final : public httplib::Stream {
 public:
  BoundedStream(int fd, SSL* ssl, Bounds& b);
  ~BoundedStream() override;

  bool is_readable() const override { return wait(POLLIN); }
  bool is_writable() const override { return wait(POLLOUT); }
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }

 private:
  ssize_t fill();
  bool retry(ssize_t n, short& want) const;
  bool wait(short events) const;
  bool count_head(const char* p, size_t n);

  int fd_;
  SSL* ssl_;
  Bounds& b_;
  int flags_ = -1;
  char buf_[16 * 1024];
  size_t pos_ = 0, len_ = 0;
  size_t head_bytes_ = 0, head_lines_ = 0;
  bool head_done_ = false, line_empty_ = true;
};

}  // namespace gd::http
