// The HTTP side of `serve`: routes to api.h on libmicrohttpd's epoll event
// loop (see http_server.cc for why), with the limits of http_limits.h, a
// Host-header check against DNS rebinding, and slow handlers and password
// checks on bounded pools of their own.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "serve/history.h"
#include "serve/host_check.h"
#include "serve/kill_api.h"
#include "serve/slurm_drainer.h"
#include "serve/snapshot.h"
#include "serve/web_config.h"

struct MHD_Daemon;

namespace gd {

class BoundedPool;
class FairPool;
class EventHub;
class FleetView;

class HttpServer {
 public:
  // `allowed_hosts`: --allowed-host values (see host_check.h).
  HttpServer(const SnapshotBox& box, const History* history,
             std::vector<std::string> allowed_hosts = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds; throws std::runtime_error "cannot listen on HOST:PORT: why"
  // (a port already served is such an error) or std::invalid_argument for
  // a bad --allowed-host. Port 0 picks a free port (see port()).
  void bind(const std::string& host, int port);
  int port() const { return port_; }
  // TLS and basic auth (--web-config); before start().
  void use_web_config(WebConfig web);
  // POST /api/v1/kill (kill_api.h); before start(). Without it, or with
  // config.enabled false, the endpoint answers 403 saying how to turn it
  // on.
  void enable_kill(KillApiConfig config);
  // serve --slurm-drain: its counters on /metrics and GET
  // /api/v1/slurm/actions (which says "enabled": false without it).
  void enable_slurm(const SlurmDrainer* drainer);
  // serve --fleet-prometheus: GET /api/v1/fleet answers from `fleet`
  // (404 saying so without it); before start().
  void enable_fleet(const FleetView* fleet);
  // Serves on threads of its own until stop().
  void start();
  void stop();
  // False if the server could not be started or its loop has ended without
  // stop() being called.
  bool healthy() const;
  // The dashboard's live stream (/api/v1/events): the sampling loop
  // publishes every snapshot here.
  EventHub& events();

  // For the request handler (http_server.cc); not part of the interface.
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  int listen_fd_ = -1;
  int port_ = 0;
  MHD_Daemon* daemon_ = nullptr;
  std::unique_ptr<BoundedPool> slow_pool_;
  std::unique_ptr<FairPool> auth_pool_;
};

}  // namespace gd
