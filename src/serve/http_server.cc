#include "serve/http_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>

#include "collect/sampler.h"
#include "serve/api.h"
#include "serve/log.h"

namespace gd {
namespace {

// Limits (a monitoring endpoint serves a few scrapers, not the public):
// GET requests carry no body; 64 KiB is ample for any we accept.
constexpr size_t kMaxPayloadBytes = 64 * 1024;
// Workers: each holds one connection at a time; together with the
// keep-alive cap below they bound what a misbehaving client can hold.
// 16 so that a few idle keep-alive connections (Prometheus, Grafana, a
// browser) cannot make a new scrape wait out their idle timeout.
constexpr size_t kWorkerThreads = 16;
// Requests per keep-alive connection before it is closed, so one client
// cannot pin a worker forever.
constexpr size_t kKeepAliveMaxRequests = 100;
// Short: scrapers come back every 10-60 s and reconnect cheaply on loopback;
// an idle connection only pins a worker.
constexpr time_t kKeepAliveTimeoutS = 2;
// A scraper sends its request in milliseconds; a slow-loris does not.
constexpr time_t kReadTimeoutS = 5;
constexpr time_t kWriteTimeoutS = 10;

void send(httplib::Response& res, ApiReply reply) {
  res.status = reply.status;
  res.set_content(std::move(reply.body), reply.content_type.c_str());
}

QueryParams params_of(const httplib::Request& req) {
  return QueryParams(req.params.begin(), req.params.end());
}

const char* reason_for(int status) {
  switch (status) {
    case 400:
      return "bad request";
    case 404:
      return "no such endpoint (try /metrics, /api/v1/status, "
             "/api/v1/processes, /api/v1/findings, /api/v1/history, "
             "/healthz)";
    case 405:
      return "method not allowed";
    case 413:
      return "request too large";
    case 414:
      return "request URI too long";
    case 431:
      return "request headers too large";
    default:
      return "request failed";
  }
}

}  // namespace

HttpServer::HttpServer(const SnapshotBox& box, const History* history)
    : box_(box),
      history_(history),
      server_(std::make_unique<httplib::Server>()) {
  auto& svr = *server_;
  svr.new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  svr.set_payload_max_length(kMaxPayloadBytes);
  // Without TCP_NODELAY every keep-alive response waited ~40 ms (Nagle
  // against the client's delayed ACK): 22 requests/s per connection.
  svr.set_tcp_nodelay(true);
  svr.set_keep_alive_max_count(kKeepAliveMaxRequests);
  svr.set_keep_alive_timeout(kKeepAliveTimeoutS);
  svr.set_read_timeout(kReadTimeoutS, 0);
  svr.set_write_timeout(kWriteTimeoutS, 0);

  svr.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    send(res, api_metrics(*box_.get(), unix_now()));
  });
  svr.Get("/api/v1/status",
          [this](const httplib::Request&, httplib::Response& res) {
            send(res, api_status(*box_.get(), unix_now()));
          });
  svr.Get("/api/v1/processes",
          [this](const httplib::Request& req, httplib::Response& res) {
            send(res, api_processes(*box_.get(), params_of(req)));
          });
  svr.Get("/api/v1/findings",
          [this](const httplib::Request&, httplib::Response& res) {
            send(res, api_findings(*box_.get()));
          });
  svr.Get("/api/v1/history",
          [this](const httplib::Request& req, httplib::Response& res) {
            send(res, api_history(history_, params_of(req), unix_now(),
                                  history_built()));
          });
  svr.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    send(res, api_healthz(*box_.get(), unix_now()));
  });
  // Every error answer is JSON with one line saying what was wrong.
  svr.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    const int status = res.status;
    send(res, json_error(status, reason_for(status)));
  });
  svr.set_exception_handler([](const httplib::Request& req,
                               httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    spdlog::error("msg=\"handler failed\" path={} error={}",
                  serve_log::q(req.path), serve_log::q(what));
    send(res, json_error(500, "internal error: " + what));
  });
}

HttpServer::~HttpServer() { stop(); }

void HttpServer::bind(const std::string& host, int port) {
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
    if (port_ <= 0)
      throw std::runtime_error("cannot listen on " + host +
                               ":0: " + std::strerror(errno));
    return;
  }
  if (!server_->bind_to_port(host, port))
    throw std::runtime_error("cannot listen on " + host + ":" +
                             std::to_string(port) + ": " +
                             std::strerror(errno));
  port_ = port;
}

void HttpServer::start() {
  thread_ = std::thread([this] {
    server_->listen_after_bind();
    ended_ = true;
    if (!stopping_) spdlog::error("msg=\"http server stopped unexpectedly\"");
  });
}

void HttpServer::stop() {
  stopping_ = true;
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

bool HttpServer::healthy() const { return !ended_ || stopping_; }

}  // namespace gd
