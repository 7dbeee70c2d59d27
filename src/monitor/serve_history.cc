#include "monitor/serve_history.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <memory>
#include <stdexcept>

namespace gd::monitor {

namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds left until `deadline`, at least 0.
int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

// Waits for `events` on `fd` until `deadline`; false on timeout or error.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, ms_left(deadline));
    if (r > 0) return true;
    if (r == 0 || errno != EINTR) return false;
  }
}

// An http:// base URL split into host and port; nullopt for anything else.
struct HostPort {
  std::string host, port;
};
std::optional<HostPort> parse_base_url(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) return std::nullopt;
  std::string rest = url.substr(scheme.size());
  if (rest.find('/') != std::string::npos) return std::nullopt;
  HostPort hp{rest, "80"};
  if (!rest.empty() && rest.front() == '[') {  // [::1]:9856
    auto close = rest.find(']');
    if (close == std::string::npos) return std::nullopt;
    hp.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') return std::nullopt;
      hp.port = rest.substr(close + 2);
    }
  } else if (auto colon = rest.rfind(':'); colon != std::string::npos) {
    hp.host = rest.substr(0, colon);
    hp.port = rest.substr(colon + 1);
  }
  if (hp.host.empty() || hp.port.empty()) return std::nullopt;
  return hp;
}

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// A reply larger than this is not a history answer.
constexpr size_t kMaxReplyBytes = 8 << 20;

// GET `path` over a fresh connection, everything before `deadline`. The
// reply's body when the status is 200, "" for another status, nullopt when
// the server could not be reached or did not answer in time.
std::optional<std::string> get_within(const addrinfo& addr,
                                      const std::string& host,
                                      const std::string& path,
                                      Clock::time_point deadline) {
  Socket s(::socket(addr.ai_family,
                    addr.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    addr.ai_protocol));
  if (s.fd() < 0) return std::nullopt;
  if (::connect(s.fd(), addr.ai_addr, addr.ai_addrlen) != 0) {
    if (errno != EINPROGRESS || !wait_for(s.fd(), POLLOUT, deadline))
      return std::nullopt;
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err)
      return std::nullopt;
  }
  // HTTP/1.0 with Connection: close: the reply ends where the stream does.
  std::string request = "GET " + path + " HTTP/1.0\r\nHost: " + host +
                        "\r\nConnection: close\r\n\r\n";
  for (size_t sent = 0; sent < request.size();) {
    if (!wait_for(s.fd(), POLLOUT, deadline)) return std::nullopt;
    ssize_t n = ::send(s.fd(), request.data() + sent, request.size() - sent,
                       MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) return std::nullopt;
    if (n > 0) sent += static_cast<size_t>(n);
  }
  std::string reply;
  char buf[16384];
  while (true) {
    if (!wait_for(s.fd(), POLLIN, deadline)) return std::nullopt;
    ssize_t n = ::recv(s.fd(), buf, sizeof buf, 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return std::nullopt;
    }
    reply.append(buf, static_cast<size_t>(n));
    if (reply.size() > kMaxReplyBytes) return std::nullopt;
  }
  auto head_end = reply.find("\r\n\r\n");
  if (reply.rfind("HTTP/1.", 0) != 0 || head_end == std::string::npos)
    return std::nullopt;
  if (reply.compare(8, 5, " 200 ") != 0) return std::string();
  return reply.substr(head_end + 4);
}

// serve's address, resolved once for all the requests of one probe.
struct Resolved {
  std::string host;
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addrs{nullptr,
                                                             ::freeaddrinfo};
};
std::optional<Resolved> resolve(const std::string& base_url) {
  auto hp = parse_base_url(base_url);
  if (!hp) return std::nullopt;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  // Numeric addresses and /etc/hosts names only: a DNS lookup could take
  // longer than the whole budget.
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(hp->host.c_str(), hp->port.c_str(), &hints, &found) != 0 ||
      !found)
    return std::nullopt;
  Resolved r;
  r.host = hp->host;
  r.addrs.reset(found);
  return r;
}

}  // namespace

std::optional<std::string> fetch_from_serve(const std::string& base_url,
                                            const std::string& path) {
  auto deadline =
      Clock::now() + std::chrono::milliseconds(kServeTotalDeadlineMs);
  auto r = resolve(base_url);
  if (!r) return std::nullopt;
  auto body = get_within(*r->addrs, r->host, path, deadline);
  if (!body || body->empty()) return std::nullopt;  // absent, slow, not 200
  return body;
}

std::map<uint32_t, std::vector<HistorySeries>> fetch_process_memory_history(
    const std::string& base_url, const std::vector<uint32_t>& pids,
    const std::string& since, const std::string& step) {
  std::map<uint32_t, std::vector<HistorySeries>> out;
  if (pids.empty() || base_url.empty()) return out;
  auto deadline =
      Clock::now() + std::chrono::milliseconds(kServeTotalDeadlineMs);
  auto r = resolve(base_url);
  if (!r) return out;
  for (uint32_t pid : pids) {
    std::string path =
        "/api/v1/history?metric=process.used_bytes&pid=" + std::to_string(pid) +
        "&since=" + since + "&step=" + step;
    auto body = get_within(*r->addrs, r->host, path, deadline);
    if (!body) break;  // not running or too slow: do not wait once per pid
    try {
      auto reply = api::parse_history_json(*body);
      // The single-metric form: its one result.
      if (!reply.multi && !reply.results.front().series.empty())
        out[pid] = std::move(reply.results.front().series);
    } catch (const std::exception&) {
      // Not a history reply (an error body, not serve): nothing for it.
    }
  }
  return out;
}

}  // namespace gd::monitor
