// A bare HTTP/1.1 client for the serve tests: sends exactly the bytes a test
// writes (hostile requests included) and reads the reply until the server
// closes the connection.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace gd::test {

struct RawReply {
  int status = 0;  // 0: closed (or timed out) without a status line
  std::string head, body;
};

inline int connect_local(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends all of `bytes` (stopping quietly when the server hangs up).
inline void send_all(int fd, const std::string& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

// Reads until the server closes or `timeout_ms` passes without a byte.
inline RawReply read_reply(int fd, int timeout_ms = 5000) {
  std::string raw;
  char buf[8192];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) break;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    raw.append(buf, static_cast<size_t>(n));
  }
  RawReply r;
  const auto end = raw.find("\r\n\r\n");
  r.head = raw.substr(0, end);
  if (end != std::string::npos) r.body = raw.substr(end + 4);
  if (raw.rfind("HTTP/1.", 0) == 0 && raw.size() > 12)
    r.status = std::atoi(raw.c_str() + 9);
  return r;
}

// One request on a fresh connection; the server is asked to close after it.
inline RawReply request(
    int port, const std::string& target,
    const std::string& extra_headers = "Host: 127.0.0.1\r\n",
    const std::string& method = "GET") {
  int fd = connect_local(port);
  if (fd < 0) return {};
  send_all(fd, method + " " + target + " HTTP/1.1\r\n" + extra_headers +
                   "Connection: close\r\n\r\n");
  RawReply r = read_reply(fd);
  close(fd);
  return r;
}

}  // namespace gd::test
