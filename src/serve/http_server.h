// The HTTP side of `serve` on cpp-httplib: routes to api.h, bounded
// request size, read/write timeouts, a fixed worker pool.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "serve/history.h"
#include "serve/snapshot.h"

namespace httplib {
class Server;
}

namespace gd {

class HttpServer {
 public:
  HttpServer(const SnapshotBox& box, const History* history);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds; throws std::runtime_error "cannot listen on HOST:PORT: why".
  // Port 0 picks a free port (see port()).
  void bind(const std::string& host, int port);
  int port() const { return port_; }
  // Serves on a thread of its own until stop().
  void start();
  void stop();
  // False if the listening loop ended without stop() being called.
  bool healthy() const;

 private:
  const SnapshotBox& box_;
  const History* history_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> ended_{false};
};

}  // namespace gd
