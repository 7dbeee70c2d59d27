#include "serve/listen_socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace gd {
namespace {

// SYN backlog: 2,000 clients connecting at once must not find a full queue
// (the kernel caps it at net.core.somaxconn).
constexpr int kListenBacklog = 1024;

std::string shown(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

[[noreturn]] void fail(const std::string& host, int port, int err) {
  std::string why = err == EADDRINUSE
                        ? "address already in use (is another gpudoctor "
                          "serve running?)"
                        : std::strerror(err);
  throw std::runtime_error("cannot listen on " + shown(host, port) + ": " +
                           why);
}

}  // namespace

int open_listen_socket(const std::string& host, int port, int& bound_port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
      rc != 0)
    throw std::runtime_error("cannot listen on " + shown(host, port) + ": " +
                             gai_strerror(rc));
  int err = EADDRNOTAVAIL;
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                a->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    // SO_REUSEADDR only lets a restarted daemon bind while old connections
    // sit in TIME_WAIT; on Linux it never shares a port with a live
    // listener (SO_REUSEPORT would, and is deliberately not set).
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 ||
        listen(fd, kListenBacklog) != 0) {
      err = errno;
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) fail(host, port, err);
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  bound_port = addr.ss_family == AF_INET6
                   ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                   : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return fd;
}

}  // namespace gd
