// The listening socket of `serve`, made here rather than by the HTTP
// library so that a port already served is an error: no SO_REUSEPORT (with
// it a second daemon would start silently and the kernel would split
// scrapes between the two), and a backlog that rides out a burst of
// connects.
#pragma once

#include <string>

namespace gd {

// Binds and listens; returns the descriptor (non-blocking, close-on-exec)
// and sets `bound_port` (the kernel's pick when `port` is 0). Throws
// std::runtime_error "cannot listen on HOST:PORT: why".
int open_listen_socket(const std::string& host, int port, int& bound_port);

}  // namespace gd
