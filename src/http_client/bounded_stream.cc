#include "http_client/bounded_stream.h"

#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "http_client/client.h"

namespace gd::http {

void Bounds::end(Stop why) {
  Stop none = Stop::kNone;
  stop.compare_exchange_strong(none, why);
  cancel->shut_down();
}

bool Bounds::ended() {
  if (stop.load() == Stop::kNone && cancel->cancelled()) end(Stop::kCancelled);
  if (stop.load() == Stop::kNone && Clock::now() >= deadline)
    end(Stop::kDeadline);
  return stop.load() != Stop::kNone;
}

BoundedStream::BoundedStream(int fd, SSL* ssl, Bounds& b)
    : fd_(fd), ssl_(ssl), b_(b) {
  flags_ = ::fcntl(fd_, F_GETFL);
  if (flags_ >= 0) ::fcntl(fd_, F_SETFL, flags_ | O_NONBLOCK);
}

BoundedStream::~BoundedStream() {
  if (flags_ >= 0) ::fcntl(fd_, F_SETFL, flags_);
}

ssize_t BoundedStream::read(char* ptr, size_t size) {
  if (pos_ == len_) {
    ssize_t n = fill();
    if (n <= 0) return n;
  }
  size_t n = std::min(size, len_ - pos_);
  if (!count_head(buf_ + pos_, n)) return -1;
  std::memcpy(ptr, buf_ + pos_, n);
  pos_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t BoundedStream::write(const char* ptr, size_t size) {
  for (;;) {
    if (b_.ended()) return -1;
    ERR_clear_error();
    ssize_t n = ssl_ ? SSL_write(ssl_, ptr, static_cast<int>(size))
                     : ::send(fd_, ptr, size, MSG_NOSIGNAL);
    if (n > 0) return n;
    short want = POLLOUT;
    if (!retry(n, want) || !wait(want)) return -1;
  }
}

// Reads what is there into buf_: >0 bytes, 0 at the end, -1 on an error,
// the deadline or a cancel.
ssize_t BoundedStream::fill() {
  for (;;) {
    if (b_.ended()) return -1;
    ERR_clear_error();
    ssize_t n = ssl_ ? SSL_read(ssl_, buf_, sizeof buf_)
                     : ::recv(fd_, buf_, sizeof buf_, 0);
    if (n > 0) {
      pos_ = 0;
      len_ = static_cast<size_t>(n);
      return n;
    }
    if (n == 0 && !ssl_) return b_.ended() ? -1 : 0;
    if (ssl_ &&
        SSL_get_error(ssl_, static_cast<int>(n)) == SSL_ERROR_ZERO_RETURN)
      return 0;
    short want = POLLIN;
    if (!retry(n, want) || !wait(want)) return -1;
  }
}

// After a failed read or write: whether to wait for `want` and retry.
// `want` comes in as the direction of the call (POLLIN for a read); TLS may
// turn it around (a read that must first write a renegotiation). A plain
// socket interrupted by a signal retries at once; one that would block
// waits for its direction (never a busy loop of recv returning EAGAIN).
bool BoundedStream::retry(ssize_t n, short& want) const {
  if (ssl_) {
    int e = SSL_get_error(ssl_, static_cast<int>(n));
    want = e == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN;
    return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE;
  }
  if (n < 0 && errno == EINTR) want = 0;
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}

// Waits for `events` until the deadline (false then, or on a cancel).
bool BoundedStream::wait(short events) const {
  if (events == 0) return !b_.ended();
  for (;;) {
    if (b_.ended()) return false;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(b_.deadline -
                                                             Clock::now());
    pollfd p{fd_, events, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

// The reply's head (status line and headers) ends at its first empty line;
// until then its bytes and lines are counted. httplib reads the head a byte
// at a time, so what it was handed is what it holds.
bool BoundedStream::count_head(const char* p, size_t n) {
  for (size_t i = 0; i < n && !head_done_; ++i) {
    if (++head_bytes_ > kMaxReplyHeadBytes) {
      b_.end(Stop::kHeadTooLarge);
      return false;
    }
    if (p[i] != '\n') {
      if (p[i] != '\r') line_empty_ = false;
      continue;
    }
    head_done_ = line_empty_;
    line_empty_ = true;
    if (++head_lines_ > kMaxReplyHeadLines) {
      b_.end(Stop::kHeadTooLarge);
      return false;
    }
  }
  return true;
}

namespace {

template <class Fn>
void address(int fd, Fn fn, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  if (fn(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0 &&
      ::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof host,
                    serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(serv);
  }
}

}  // namespace

void BoundedStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  address(fd_, ::getpeername, ip, port);
}

void BoundedStream::get_local_ip_and_port(std::string& ip, int& port) const {
  address(fd_, ::getsockname, ip, port);
}

}  // namespace gd::http
