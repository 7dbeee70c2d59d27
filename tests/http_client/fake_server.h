// A hostile or plain HTTP server on a thread of a test, on 127.0.0.1 (raw
// sockets: it does what no real server library would). One connection at a
// time, as `mode` says:
//   kReply:   reads the request head, sends `reply` as it is, closes (or,
//             made with a list of replies, the i-th connection gets the
//             i-th, the last one again after the end);
//   kDrip:    sends a head, then a body byte every 200 ms (at most
//             `drip_bytes`);
//   kHeaders: sends header lines until the client goes away;
//   kSilent:  reads the request and never answers.
// Each request's head (and body, as far as it was read) is kept.
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gd::http::testing {

class FakeServer {
 public:
  enum class Mode { kReply, kDrip, kHeaders, kSilent };
  explicit FakeServer(Mode mode, std::string reply = "", int drip_bytes = 1000)
      : mode_(mode), reply_(std::move(reply)), drip_bytes_(drip_bytes) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 ||
        ::listen(fd_, 4) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("cannot listen");
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  explicit FakeServer(std::vector<std::string> replies)
      : FakeServer(Mode::kReply) {
    std::lock_guard lock(mu_);
    replies_ = std::move(replies);
  }
  ~FakeServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_);
  }
  // Body bytes sent before the client closed (kDrip).
  int dripped() const { return dripped_; }
  int connections() const { return connections_; }
  std::string request() const {
    std::lock_guard lock(mu_);
    return requests_.empty() ? "" : requests_.back();
  }
  std::vector<std::string> requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }

 private:
  static bool wait(int fd, short events, int ms) {
    pollfd p{fd, events, 0};
    return ::poll(&p, 1, ms) > 0;
  }
  bool send_all(int fd, const std::string& s) {
    for (size_t off = 0; off < s.size();) {
      if (stop_) return false;
      if (!wait(fd, POLLOUT, 100)) continue;
      ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  // The request's head, and what of its body came with it or soon after.
  std::string read_request(int c) {
    std::string got;
    char buf[4096];
    while (!stop_ && got.size() < 64 * 1024) {
      bool head_done = got.find("\r\n\r\n") != std::string::npos;
      if (!wait(c, POLLIN, head_done ? 50 : 100)) {
        if (head_done) break;
        continue;
      }
      ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  }
  void drip(int c) {
    char buf[4096];
    bool open = send_all(c,
                         "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n"
                         "\r\n{");
    while (open && !stop_ && dripped_ < drip_bytes_) {
      // The client closing is seen as readable (EOF) here.
      if (wait(c, POLLIN, 200)) {
        if (::recv(c, buf, sizeof buf, 0) > 0) continue;
        break;
      }
      open = send_all(c, " ");
      if (open) ++dripped_;
    }
  }
  void serve() {
    while (!stop_) {
      if (!wait(fd_, POLLIN, 50)) continue;
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      ++connections_;
      std::string got = read_request(c);
      std::string reply = reply_;
      {
        std::lock_guard lock(mu_);
        if (!replies_.empty())
          reply = replies_[std::min(requests_.size(), replies_.size() - 1)];
        requests_.push_back(got);
      }
      switch (mode_) {
        case Mode::kReply:
          send_all(c, reply);
          break;
        case Mode::kDrip:
          drip(c);
          break;
        case Mode::kHeaders: {
          std::string lines;
          for (int i = 0; i < 1000; ++i) lines += "A: b\r\n";
          bool open = send_all(c, "HTTP/1.1 200 OK\r\n");
          while (open && !stop_) open = send_all(c, lines);
          break;
        }
        case Mode::kSilent: {
          char buf[4096];
          while (!stop_)
            if (wait(c, POLLIN, 50) && ::recv(c, buf, sizeof buf, 0) <= 0)
              break;  // the client went away
          break;
        }
      }
      ::close(c);
    }
  }

  Mode mode_;
  std::string reply_;
  int drip_bytes_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> dripped_{0};
  std::atomic<int> connections_{0};
  mutable std::mutex mu_;
  std::vector<std::string> replies_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

}  // namespace gd::http::testing
