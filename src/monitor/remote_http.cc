#include "monitor/remote_http.h"

#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace gd::monitor {

// ---- RequestCancel --------------------------------------------------------

RequestCancel::~RequestCancel() { release(); }

void RequestCancel::cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

bool RequestCancel::cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

void RequestCancel::adopt(int fd) {
  std::lock_guard lock(mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  // Shut down before connect: the connect fails at once.
  if (cancelled_ && fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

void RequestCancel::shut_down() {
  std::lock_guard lock(mu_);
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

void RequestCancel::release() {
  std::lock_guard lock(mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

namespace {

using Clock = std::chrono::steady_clock;

std::chrono::microseconds seconds(double s) {
  return std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::duration<double>(s));
}

// Why a request was ended on our side (the first reason wins).
enum class Stop { kNone, kDeadline, kCancelled, kHeadTooLarge };

struct Bounds {
  Clock::time_point deadline;
  double total_s = 0;
  RequestCancel* cancel = nullptr;
  std::atomic<Stop> stop{Stop::kNone};

  void end(Stop why) {
    Stop none = Stop::kNone;
    stop.compare_exchange_strong(none, why);
    cancel->shut_down();
  }
  bool ended() {
    if (stop.load() == Stop::kNone && cancel->cancelled())
      end(Stop::kCancelled);
    if (stop.load() == Stop::kNone && Clock::now() >= deadline)
      end(Stop::kDeadline);
    return stop.load() != Stop::kNone;
  }
};

// The connection as httplib reads and writes it, in place of its own
// streams (which wait per read, without a total deadline): non-blocking,
// each wait bounded by what is left of the deadline, and the reply's head
// counted as it is read.
class BoundedStream final : public httplib::Stream {
 public:
  BoundedStream(int fd, SSL* ssl, Bounds& b) : fd_(fd), ssl_(ssl), b_(b) {
    flags_ = ::fcntl(fd_, F_GETFL);
    if (flags_ >= 0) ::fcntl(fd_, F_SETFL, flags_ | O_NONBLOCK);
  }
  ~BoundedStream() override {
    if (flags_ >= 0) ::fcntl(fd_, F_SETFL, flags_);
  }

  bool is_readable() const override { return wait(POLLIN); }
  bool is_writable() const override { return wait(POLLOUT); }

  ssize_t read(char* ptr, size_t size) override {
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

  ssize_t write(const char* ptr, size_t size) override {
    for (;;) {
      if (b_.ended()) return -1;
      ERR_clear_error();
      ssize_t n = ssl_ ? SSL_write(ssl_, ptr, static_cast<int>(size))
                       : ::send(fd_, ptr, size, MSG_NOSIGNAL);
      if (n > 0) return n;
      short want = 0;
      if (!retry(n, want) || !wait(want)) return -1;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address(::getpeername, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address(::getsockname, ip, port);
  }
  socket_t socket() const override { return fd_; }

 private:
  // Reads what is there into buf_: >0 bytes, 0 at the end, -1 on an error,
  // the deadline or a cancel.
  ssize_t fill() {
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
      short want = 0;
      if (!retry(n, want) || !wait(want)) return -1;
    }
  }

  // After a failed read or write: whether to wait for `want` and retry.
  bool retry(ssize_t n, short& want) const {
    if (ssl_) {
      int e = SSL_get_error(ssl_, static_cast<int>(n));
      want = e == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN;
      return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE;
    }
    want = 0;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
  }

  // Waits for `events` until the deadline (false then, or on a cancel).
  bool wait(short events) const {
    if (events == 0) return !b_.ended();
    for (;;) {
      if (b_.ended()) return false;
      auto left = std::chrono::ceil<std::chrono::milliseconds>(b_.deadline -
                                                               Clock::now());
      pollfd p{fd_, events, 0};
      int r =
          ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
      if (r > 0) return true;
      if (r < 0 && errno != EINTR) return false;
    }
  }

  // The reply's head (status line and headers) ends at its first empty
  // line; until then its bytes and lines are counted. httplib reads the
  // head a byte at a time, so what it was handed is what it holds.
  bool count_head(const char* p, size_t n) {
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

  template <class Fn>
  void address(Fn fn, std::string& ip, int& port) const {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    if (fn(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0 &&
        ::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host,
                      sizeof host, serv, sizeof serv,
                      NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
      ip = host;
      port = std::atoi(serv);
    }
  }

  int fd_;
  SSL* ssl_;
  Bounds& b_;
  int flags_ = -1;
  char buf_[16 * 1024];
  size_t pos_ = 0, len_ = 0;
  size_t head_bytes_ = 0, head_lines_ = 0;
  bool head_done_ = false, line_empty_ = true;
};

// httplib's client (plain or TLS: `Base`) with its socket read and written
// through a BoundedStream. process_socket is the library's hook for how a
// connected socket becomes a Stream.
template <class Base>
class BoundedClient final : public Base {
 public:
  BoundedClient(const RemoteUrl& url, Bounds& b)
      : Base(url.host, url.port), b_(b) {}

 private:
  using Socket = httplib::ClientImpl::Socket;
  bool process_socket(const Socket& socket,
                      std::function<bool(httplib::Stream&)> callback) override {
    BoundedStream stream(socket.sock, socket.ssl, b_);
    return callback(stream);
  }

  Bounds& b_;
};

std::unique_ptr<httplib::ClientImpl> make_client(const RemoteOptions& o,
                                                 const RemoteUrl& url,
                                                 Bounds& b) {
  std::unique_ptr<httplib::ClientImpl> client;
  if (url.https)
    client = std::make_unique<BoundedClient<httplib::SSLClient>>(url, b);
  else
    client = std::make_unique<BoundedClient<httplib::ClientImpl>>(url, b);
  // Each phase gets the whole budget; the deadline ends them all together.
  client->set_connection_timeout(seconds(b.total_s));
  client->set_read_timeout(seconds(b.total_s));
  client->set_write_timeout(seconds(b.total_s));
  client->set_keep_alive(false);
  client->set_socket_options([&b](socket_t fd) { b.cancel->adopt(fd); });
  if (!o.user.empty()) client->set_basic_auth(o.user, o.password);
  if (!o.ca_file.empty()) client->set_ca_cert_path(o.ca_file);
  return client;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

BoundedReply send_bounded(const RemoteOptions& o, const RemoteUrl& url,
                          double total_s, RequestCancel& cancel,
                          httplib::Request& req, httplib::Response& res) {
  Bounds b;
  b.total_s = total_s;
  b.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(total_s));
  b.cancel = &cancel;
  auto client = make_client(o, url, b);
  httplib::Error error = httplib::Error::Success;
  bool ok = false;
  {
    // Connecting and the TLS handshake happen in httplib, each phase
    // waiting up to total_s: at the deadline this shuts the socket down.
    std::jthread watchdog([&b](std::stop_token stop) {
      std::mutex mu;
      std::condition_variable_any cv;
      std::unique_lock lock(mu);
      cv.wait_until(lock, stop, b.deadline, [] { return false; });
      if (!stop.stop_requested()) b.ended();
    });
    ok = !cancel.cancelled() && client->send(req, res, error);
  }
  Stop why = b.stop.load();
  if (!ok && why == Stop::kNone && cancel.cancelled()) why = Stop::kCancelled;
  cancel.release();
  BoundedReply r;
  r.ok = ok && why == Stop::kNone;
  if (r.ok) return r;
  switch (why) {
    case Stop::kDeadline:
      r.error = "cannot reach " + o.url + ": no complete reply within " +
                seconds_text(total_s) + "s";
      break;
    case Stop::kCancelled:
      r.error = "stopped";
      break;
    case Stop::kHeadTooLarge:
      r.error = o.url +
                ": the reply's headers exceed 100 lines or 64 KiB (is it a "
                "gpudoctor serve?)";
      break;
    case Stop::kNone:
      r.error = cannot_reach(o, error);
  }
  return r;
}

std::string cannot_reach(const RemoteOptions& o, httplib::Error e) {
  std::string why;
  switch (e) {
    case httplib::Error::Connection:
      why = "no connection (is serve running and listening there?)";
      break;
    case httplib::Error::Read:
      why = "no answer in time";
      break;
    case httplib::Error::SSLConnection:
      why = "the TLS handshake failed (is it https on that port?)";
      break;
    case httplib::Error::SSLServerVerification:
      why = o.ca_file.empty()
                ? "its certificate is not trusted (give --ca-file with "
                  "serve's certificate or the CA that signed it)"
                : "its certificate is not trusted by --ca-file " + o.ca_file +
                      " (or does not name this host)";
      break;
    default:
      why = httplib::to_string(e);
  }
  return "cannot reach " + o.url + ": " + why;
}

}  // namespace gd::monitor
