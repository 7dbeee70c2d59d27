// Why libmicrohttpd and not cpp-httplib (which this file used before):
// cpp-httplib gives a connection a thread of a fixed pool for as long as
// the connection lives, so N slow or idle clients starve a pool of N, and
// it keeps every header of a request (no count limit). Measured with
// bench/serve_attack.py on the 2-core build VM under load (fresh connection
// per scrape, 5 s scrape timeout), cpp-httplib 0.11 with 16 workers
// against this server:
//   64 slowloris clients:  no scrape answered       vs. p99 4 ms, all 100
//   2,000 idle sockets:    no scrape answered       vs. p99 4 ms, all 100
//   16 x 40,000 headers:   RSS 129 MiB, p99 1.8 s    vs. RSS 15 MiB (431)
// and the same keep-alive throughput (wrk, 4 connections: 9.5k vs 8.8k
// /metrics per second).
// Configuring cpp-httplib to its limits cannot fix the first two: the
// thread-per-connection model is the cause (more threads only move the
// number). libmicrohttpd (Debian's libmicrohttpd-dev) runs one epoll event
// loop, where an idle or slow connection costs a descriptor and a bounded
// buffer but no thread, and it has the knobs this needs: a total
// connection cap, a per-connection memory limit (bounds header bytes), an
// idle timeout, and suspend/resume so that slow handlers run on a pool of
// their own without blocking the loop. There is no per-IP limit: on
// loopback every client, the scraper included, shares one address.
#include "serve/http_server.h"

#include <microhttpd.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "collect/sampler.h"
#include "serve/api.h"
#include "serve/basic_auth.h"
#include "serve/bounded_pool.h"
#include "serve/http_limits.h"
#include "serve/listen_socket.h"
#include "serve/log.h"

namespace gd {

struct HttpServer::Impl {
  const SnapshotBox& box;
  const History* history;
  std::vector<std::string> allowed_hosts;
  HostPolicy hosts;
  BoundedPool* slow_pool = nullptr;
  WebConfig web;
  std::unique_ptr<BasicAuth> auth;  // null: no basic auth
  mutable MetricsPageCache metrics_page;
};

namespace {

using Impl = HttpServer::Impl;

// One request's state between the calls libmicrohttpd makes for it.
struct RequestState {
  std::optional<ApiReply> reply;  // set by a slow handler before resuming
};

constexpr std::string_view kRoutes[] = {"/metrics",          "/api/v1/status",
                                        "/api/v1/processes", "/api/v1/findings",
                                        "/api/v1/history",   "/healthz"};

// Handlers that may take long (SQLite) and so run on the slow pool.
bool is_slow(std::string_view path) { return path == "/api/v1/history"; }

bool is_route(std::string_view path) {
  for (auto r : kRoutes)
    if (r == path) return true;
  return false;
}

ApiReply route(const Impl& s, std::string_view path, const QueryParams& q) {
  const double now = unix_now();
  if (path == "/metrics") return s.metrics_page.reply(s.box.get(), now);
  if (path == "/api/v1/status") return api_status(*s.box.get(), now);
  if (path == "/api/v1/processes") return api_processes(*s.box.get(), q);
  if (path == "/api/v1/findings") return api_findings(*s.box.get());
  if (path == "/api/v1/history") return api_history(s.history, q, now);
  if (path == "/healthz") return api_healthz(*s.box.get(), now);
  return json_error(404,
                    "no such endpoint (try /metrics, /api/v1/status, "
                    "/api/v1/processes, /api/v1/findings, /api/v1/history, "
                    "/healthz)");
}

// A handler's exception is logged with its text; the client only learns
// that it failed (exception text can name files and internals).
ApiReply guarded(const Impl& s, const std::string& path, const QueryParams& q) {
  try {
    return route(s, path, q);
  } catch (const std::exception& e) {
    spdlog::error("msg=\"handler failed\" path={} error={}", serve_log::q(path),
                  serve_log::q(e.what()));
  } catch (...) {
    spdlog::error("msg=\"handler failed\" path={} error=unknown",
                  serve_log::q(path));
  }
  return json_error(500, "internal error");
}

MHD_Result add_param(void* cls, MHD_ValueKind, const char* key,
                     const char* value) {
  static_cast<QueryParams*>(cls)->emplace(key, value ? value : "");
  return MHD_YES;
}

QueryParams params_of(MHD_Connection* c) {
  QueryParams q;
  MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_param, &q);
  return q;
}

std::optional<std::string_view> header(MHD_Connection* c, const char* name) {
  const char* v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
  if (!v) return std::nullopt;
  return std::string_view(v);
}

// A body up to this size is read and dropped before the 413, so that a
// client still sending it reads the answer instead of a reset connection;
// a larger one is refused at once and the connection closed.
constexpr size_t kMaxDrainedBodyBytes = 1 << 20;

bool drainable_body(MHD_Connection* c) {
  if (header(c, MHD_HTTP_HEADER_TRANSFER_ENCODING)) return false;
  auto len = header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
  if (!len) return false;
  char* end = nullptr;
  const std::string text(*len);
  const unsigned long long n = std::strtoull(text.c_str(), &end, 10);
  return end && *end == 0 && n <= kMaxDrainedBodyBytes;
}

bool has_body(MHD_Connection* c) {
  if (header(c, MHD_HTTP_HEADER_TRANSFER_ENCODING)) return true;
  auto len = header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
  return len && *len != "0";
}

// What is refused before any handler runs, or nullopt.
std::optional<ApiReply> refusal(const Impl& s, MHD_Connection* c,
                                std::string_view url, std::string_view method) {
  // Nothing here takes a body: refuse it before reading a byte of it.
  if (has_body(c)) return json_error(413, "request bodies are not accepted");
  if (method != "GET" && method != "HEAD")
    return json_error(405, "method not allowed (GET or HEAD only)");
  if (!host_allowed(s.hosts, header(c, MHD_HTTP_HEADER_HOST)))
    return json_error(403,
                      "Host header not allowed: use a loopback name or one "
                      "given to serve with --allowed-host");
  if (url.size() > http_limits::kMaxUriBytes)
    return json_error(414, "request URI too long");
  return std::nullopt;
}

void free_body(void* body) { delete static_cast<std::string*>(body); }

MHD_Result queue(MHD_Connection* c, ApiReply reply) {
  // The body is handed over, not copied (a /metrics page is ~60 KB).
  auto* body = new std::string(std::move(reply.body));
  MHD_Response* r = MHD_create_response_from_buffer_with_free_callback_cls(
      body->size(), body->data(), free_body, body);
  if (!r) {
    delete body;
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                          reply.content_type.c_str());
  if (reply.status == 401)
    MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                            "Basic realm=\"gpudoctor\"");
  if (reply.status == 405)
    MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  const MHD_Result ok =
      MHD_queue_response(c, static_cast<unsigned>(reply.status), r);
  MHD_destroy_response(r);
  return ok;
}

// Runs `work` on the slow pool: the connection is suspended (the loop goes
// on serving others) and resumed with the reply, or with 503 when the
// pool's queue is full or it is shutting down.
void run_slow(Impl& s, MHD_Connection* c, RequestState* state,
              std::function<ApiReply()> work) {
  // Suspended before the job exists, so the job's resume cannot come
  // first.
  MHD_suspend_connection(c);
  const bool queued = s.slow_pool->try_submit(
      [c, state, work = std::move(work)](bool cancelled) {
        state->reply = cancelled ? json_error(503, "shutting down") : work();
        MHD_resume_connection(c);
      });
  if (!queued) {
    state->reply = json_error(503, "too many slow requests at once; retry");
    MHD_resume_connection(c);
  }
}

ApiReply unauthorized() { return json_error(401, "authentication required"); }

// Called once when the headers are in, once per piece of a body, and once
// when the request is complete. Replies are queued on that last call: one
// queued earlier makes libmicrohttpd close the connection after it, which
// is wanted for a body refused unread but would end keep-alive for every
// scrape.
MHD_Result on_request(void* cls, MHD_Connection* c, const char* url,
                      const char* method, const char*, const char*,
                      size_t* upload_size, void** con_cls) {
  Impl& s = *static_cast<Impl*>(cls);
  auto* state = static_cast<RequestState*>(*con_cls);
  if (!state) {  // headers are in: decide now, before any body is read
    state = new RequestState;
    *con_cls = state;
    if (auto refused = refusal(s, c, url, method)) {
      if (refused->status == 413 && !drainable_body(c))
        return queue(c, std::move(*refused));  // and close, body unread
      state->reply = std::move(*refused);
    }
    return MHD_YES;
  }
  if (*upload_size != 0) {  // a body being drained before its 413
    *upload_size = 0;
    return MHD_YES;
  }
  if (state->reply) return queue(c, std::move(*state->reply));
  const std::string path = url;
  QueryParams q = is_route(url) ? params_of(c) : QueryParams{};
  if (s.auth) {
    const auto creds = header(c, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!creds) return queue(c, unauthorized());
    if (!s.auth->known_good(*creds)) {  // bcrypt: never on the loop
      run_slow(s, c, state,
               [&s, given = std::string(*creds), path, q = std::move(q)] {
                 return s.auth->check(given) ? guarded(s, path, q)
                                             : unauthorized();
               });
      return MHD_YES;
    }
  }
  if (is_slow(path)) {  // called again, with the reply, on resume
    run_slow(s, c, state,
             [&s, path, q = std::move(q)] { return guarded(s, path, q); });
    return MHD_YES;
  }
  return queue(c, guarded(s, path, q));
}

void on_completed(void*, MHD_Connection*, void** con_cls,
                  MHD_RequestTerminationCode) {
  delete static_cast<RequestState*>(*con_cls);
  *con_cls = nullptr;
}

// libmicrohttpd's own messages (refused connections, timeouts, malformed
// requests) come at attack rates, so they are debug lines.
void on_log(void*, const char* fmt, va_list ap) {
  char line[512];
  std::vsnprintf(line, sizeof line, fmt, ap);
  size_t n = std::strlen(line);
  while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
  spdlog::debug("msg=\"http\" detail={}", serve_log::q(line));
}

// The connection cap, lowered to a quarter of the open-files limit so that
// connections never take the descriptors sampling needs.
unsigned connection_cap() {
  rlimit lim{};
  size_t cap = http_limits::kMaxConnections;
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    cap = std::min<size_t>(cap, std::max<size_t>(64, lim.rlim_cur / 4));
  return static_cast<unsigned>(cap);
}

}  // namespace

HttpServer::HttpServer(const SnapshotBox& box, const History* history,
                       std::vector<std::string> allowed_hosts)
    : impl_(new Impl{box,
                     history,
                     std::move(allowed_hosts),
                     {},
                     nullptr,
                     {},
                     nullptr,
                     {}}) {}

HttpServer::~HttpServer() {
  stop();
  if (listen_fd_ >= 0) close(listen_fd_);
}

void HttpServer::bind(const std::string& host, int port) {
  impl_->hosts = host_policy_for(host, impl_->allowed_hosts);
  listen_fd_ = open_listen_socket(host, port, port_);
}

void HttpServer::use_web_config(WebConfig web) {
  if (!web.basic_auth_users.empty())
    impl_->auth = std::make_unique<BasicAuth>(web.basic_auth_users);
  impl_->web = std::move(web);
}

void HttpServer::start() {
  slow_pool_ = std::make_unique<BoundedPool>(http_limits::kSlowThreads,
                                             http_limits::kSlowQueue);
  impl_->slow_pool = slow_pool_.get();
  // TLS (GnuTLS inside libmicrohttpd): PEM texts and the priority string
  // live in impl_ as long as the daemon.
  std::vector<MHD_OptionItem> tls;
  if (impl_->web.tls) {
    const auto& w = impl_->web;
    tls.push_back(
        {MHD_OPTION_HTTPS_MEM_KEY, 0, const_cast<char*>(w.key_pem.c_str())});
    tls.push_back(
        {MHD_OPTION_HTTPS_MEM_CERT, 0, const_cast<char*>(w.cert_pem.c_str())});
    tls.push_back({MHD_OPTION_HTTPS_PRIORITIES, 0,
                   const_cast<char*>(w.tls_priorities.c_str())});
  }
  tls.push_back({MHD_OPTION_END, 0, nullptr});
  const unsigned flags = (impl_->web.tls ? MHD_USE_TLS : 0) | MHD_USE_EPOLL |
                         MHD_USE_INTERNAL_POLLING_THREAD |
                         MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
                         MHD_USE_TURBO;
  daemon_ = MHD_start_daemon(
      flags, 0, nullptr, nullptr, &on_request, impl_.get(),
      MHD_OPTION_LISTEN_SOCKET, listen_fd_, MHD_OPTION_CONNECTION_LIMIT,
      connection_cap(), MHD_OPTION_CONNECTION_MEMORY_LIMIT,
      http_limits::kConnectionMemoryBytes, MHD_OPTION_CONNECTION_TIMEOUT,
      http_limits::kIdleTimeoutS, MHD_OPTION_NOTIFY_COMPLETED, &on_completed,
      nullptr, MHD_OPTION_EXTERNAL_LOGGER, &on_log, nullptr,
      MHD_OPTION_STRICT_FOR_CLIENT, 1, MHD_OPTION_ARRAY, tls.data(),
      MHD_OPTION_END);
  if (!daemon_)
    throw std::runtime_error(
        impl_->web.tls
            ? "cannot start HTTPS on port " + std::to_string(port_) +
                  ": the web config's cert_file or key_file is not PEM, or "
                  "the key does not match the certificate"
            : "cannot start the HTTP server on port " + std::to_string(port_));
  listen_fd_ = -1;  // the daemon owns and closes it now
}

void HttpServer::stop() {
  // The pool first: every suspended connection is resumed (with its reply
  // or 503) before the daemon stops, which it requires.
  if (slow_pool_) slow_pool_->stop();
  if (daemon_) MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
}

bool HttpServer::healthy() const { return daemon_ != nullptr || !slow_pool_; }

}  // namespace gd
