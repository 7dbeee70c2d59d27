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

#include <fmt/format.h>
#include <microhttpd.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "api/error_json.h"
#include "collect/sampler.h"
#include "exporter/family_writer.h"
#include "serve/api.h"
#include "serve/basic_auth.h"
#include "serve/bounded_pool.h"
#include "serve/event_stream.h"
#include "serve/fair_pool.h"
#include "serve/fleet_view.h"
#include "serve/http_limits.h"
#include "serve/kill_api.h"
#include "serve/listen_socket.h"
#include "serve/log.h"
#include "serve/mhd_reply.h"
#include "serve/parked_buffer.h"
#include "serve/slurm_api.h"
#include "serve/trace_download.h"
#include "serve/usage.h"
#include "serve/web_page.h"

namespace gd {

struct HttpServer::Impl {
  Impl(const SnapshotBox& b, const History* h, std::vector<std::string> a)
      : box(b), history(h), allowed_hosts(std::move(a)) {}
  const SnapshotBox& box;
  const History* history;
  std::vector<std::string> allowed_hosts;
  HostPolicy hosts;
  BoundedPool* slow_pool = nullptr;
  FairPool* auth_pool = nullptr;  // password checks (bcrypt)
  // When the next "password checks refused" line may be logged
  // (steady-clock seconds).
  std::atomic<double> next_refusal_log{0};
  WebConfig web;
  std::unique_ptr<BasicAuth> auth;      // null: no basic auth
  std::unique_ptr<KillApi> kill;        // null: remote kill off
  const SlurmDrainer* slurm = nullptr;  // null: --slurm-drain off
  const FleetView* fleet = nullptr;     // null: no --fleet-prometheus
  EventHub events{http_limits::kMaxEventStreams,
                  http_limits::kMaxEventQueueBytes};
  // Replies produced by other threads, guarded by streams_mu: trace
  // downloads in progress (each with its producer thread), the streamed
  // reply of the kill session under way (one at a time), and whether serve
  // is stopping.
  std::mutex streams_mu;
  std::vector<std::shared_ptr<TraceDownload>> downloads;
  std::shared_ptr<ParkedBuffer> kill_stream;
  bool stopping = false;
  mutable MetricsPageCache metrics_page;
  mutable UsageCache usage;
};

namespace {

using Impl = HttpServer::Impl;

// One request's state between the calls libmicrohttpd makes for it.
struct RequestState {
  std::optional<ApiReply> reply;  // set by a slow handler before resuming
  bool authorized = false;        // basic auth passed (or none configured)
  // POST /api/v1/kill: its body (at most kMaxKillBodyBytes) and what its
  // log line says besides the status.
  bool kill = false;
  std::string body;
  std::string kill_log;
  // Set by the kill session as it begins a streamed reply: the response
  // to queue when resumed.
  std::shared_ptr<ParkedBuffer> kill_stream;
};

constexpr std::string_view kRoutes[] = {
    "/metrics",         "/api/v1/status",        "/api/v1/processes",
    "/api/v1/findings", "/api/v1/history",       "/healthz",
    "/api/v1/events",   "/api/v1/alerts",        "/api/v1/export",
    "/api/v1/usage",    "/api/v1/slurm/actions", "/api/v1/health",
    "/api/v1/fleet"};

// Handlers that may take long (SQLite; the fleet's reply, a few MB for the
// largest fleet) and so run on the slow pool.
bool is_slow(std::string_view path) {
  return path == "/api/v1/history" || path == "/api/v1/alerts" ||
         path == "/api/v1/usage" || path == "/api/v1/fleet";
}

bool is_route(std::string_view path) {
  for (auto r : kRoutes)
    if (r == path) return true;
  return false;
}

constexpr const char* kRouteList =
    "/ (the dashboard), /metrics, /api/v1/status, /api/v1/processes, "
    "/api/v1/findings, /api/v1/history, /api/v1/alerts, /api/v1/events, "
    "/api/v1/usage, /api/v1/export, /api/v1/slurm/actions, /api/v1/health, "
    "/api/v1/fleet, /healthz, POST "
    "/api/v1/kill";

// Basic auth under a wrong-password flood: what it refused, on /metrics.
void render_auth_families(const BasicAuth::Counts& n, std::string& out) {
  prom::FamilyWriter(
      out, "gpudoctor_http_auth_failures_total", "counter",
      "Requests answered 401 for a wrong or unknown basic-auth user "
      "or password.")
      .add("", n.failures);
  prom::FamilyWriter(
      out, "gpudoctor_http_auth_checks_refused_total", "counter",
      "Password checks refused (503) because too many were waiting: "
      "a wrong-password flood.")
      .add("", n.refused);
}

// `gzip`: the client accepts a gzip body (the replies that can be large
// give one).
ApiReply route(const Impl& s, std::string_view path, const QueryParams& q,
               bool gzip) {
  const double now = unix_now();
  if (path == "/metrics") {
    ApiReply r = s.metrics_page.reply(s.box.get(), now);
    if (s.auth) render_auth_families(s.auth->counts(), r.body);
    if (s.slurm) {
      auto snap = s.box.get();
      render_slurm_families(s.slurm->status(), snap->header->host.hostname,
                            r.body);
    }
    return r;
  }
  if (path == "/api/v1/status")
    return api_status(*s.box.get(), now, s.kill && s.kill->enabled());
  if (path == "/api/v1/processes") return api_processes(*s.box.get(), q);
  if (path == "/api/v1/findings") return api_findings(*s.box.get());
  if (path == "/api/v1/history") return api_history(s.history, q, now);
  if (path == "/healthz") return api_healthz(*s.box.get(), now);
  if (path == "/api/v1/health") return api_node_health(*s.box.get(), now);
  if (path == "/api/v1/alerts") return api_alerts(s.history, q, now);
  if (path == "/api/v1/usage") return s.usage.reply(s.history, q, now);
  if (path == "/api/v1/fleet") {
    if (!s.fleet)
      return json_error(404,
                        "serve was not given a Prometheus: start it with "
                        "--fleet-prometheus URL to see the fleet here");
    return s.fleet->reply(now, gzip);
  }
  if (path == "/api/v1/slurm/actions") {
    if (!s.slurm) return api_slurm_actions(nullptr);
    auto status = s.slurm->status();
    return api_slurm_actions(&status);
  }
  return json_error(404,
                    std::string("no such endpoint (try ") + kRouteList + ")");
}

// A handler's exception is logged with its text; the client only learns
// that it failed (exception text can name files and internals).
ApiReply guarded(const Impl& s, const std::string& path, const QueryParams& q,
                 bool gzip) {
  try {
    return route(s, path, q, gzip);
  } catch (const std::exception& e) {
    spdlog::error("msg=\"handler failed\" path={} error={}", serve_log::q(path),
                  serve_log::q(e.what()));
  } catch (...) {
    spdlog::error("msg=\"handler failed\" path={} error=unknown",
                  serve_log::q(path));
  }
  return json_error(500, "internal error");
}

// Two Host or two Content-Length headers: a proxy in front of serve may
// have read the other one, so where this request ends (or whom it is for)
// is in doubt. Refused, and the connection closed (request smuggling).
std::optional<ApiReply> framing_refusal(MHD_Connection* c) {
  for (const char* name :
       {MHD_HTTP_HEADER_HOST, MHD_HTTP_HEADER_CONTENT_LENGTH})
    if (header_count(c, name) > 1)
      return json_error(
          400, std::string("more than one ") + name + " header in the request");
  return std::nullopt;
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

using Work = std::function<std::optional<ApiReply>(bool& resumed)>;
// The reply when a pool refuses a job, or cancels it (true: stopping, or,
// for the password pool, pushed out by another address's).
using Refused = std::function<ApiReply(bool cancelled)>;

// Runs `work` on the slow pool: the connection is suspended (the loop goes
// on serving others) and resumed with the reply, or with 503 when the
// pool's queue is full or it is shutting down. A job that returns no reply
// lets the request go on when resumed (basic auth passed). A job that
// handed the connection back itself (a streamed kill reply) sets `resumed`
// and returns no reply: `state` may be gone by then. run_suspended() is
// that on the pool that `submit` (its try_submit) hands the job to.
void run_suspended(MHD_Connection* c, RequestState* state,
                   const std::function<bool(BoundedPool::Job)>& submit,
                   Work work, Refused refused) {
  // Suspended before the job exists, so the job's resume cannot come
  // first.
  MHD_suspend_connection(c);
  const bool queued =
      submit([c, state, work = std::move(work), refused](bool cancelled) {
        bool resumed = false;
        if (cancelled)
          state->reply = refused(true);
        else if (auto reply = work(resumed))
          state->reply = std::move(*reply);
        if (!resumed) MHD_resume_connection(c);
      });
  if (!queued) {
    state->reply = refused(false);
    MHD_resume_connection(c);
  }
}

void run_slow(Impl& s, MHD_Connection* c, RequestState* state, Work work) {
  run_suspended(
      c, state,
      [&s](BoundedPool::Job job) {
        return s.slow_pool->try_submit(std::move(job));
      },
      std::move(work),
      [](bool cancelled) {
        return cancelled
                   ? json_error(503, "shutting down")
                   : json_error(503, "too many slow requests at once; retry");
      });
}

ApiReply unauthorized() { return json_error(401, "authentication required"); }

// A password check refused: counted, and logged at most once a minute (a
// flood would write a line per request).
ApiReply check_refused(Impl& s, const std::string& address) {
  s.auth->note_refused();
  const double now = std::chrono::duration<double>(
                         std::chrono::steady_clock::now().time_since_epoch())
                         .count();
  double next = s.next_refusal_log.load();
  if (now >= next && s.next_refusal_log.compare_exchange_strong(next, now + 60))
    spdlog::warn(
        "msg=\"password checks refused: too many waiting (a wrong-password "
        "flood?)\" client={} auth_checks_refused_total={} "
        "auth_failures_total={}",
        serve_log::q(address), s.auth->counts().refused,
        s.auth->counts().failures);
  ApiReply r = json_error(503, "too many password checks at once; retry");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

// Checks a password not seen before on the password pool, whose queue is
// shared fairly between client addresses (fair_pool.h): a flood from one
// address neither takes the slow pool's threads (/api/v1/history, remote
// kill) nor holds up a login from another address for long.
void check_password(Impl& s, MHD_Connection* c, RequestState* state,
                    std::string given) {
  const std::string address = client_address(c);
  run_suspended(
      c, state,
      [&s, &address](BoundedPool::Job job) {
        return s.auth_pool->try_submit(address, std::move(job));
      },
      [&s, state, given = std::move(given)](bool&) {
        if (!s.auth->check(given))
          return std::optional<ApiReply>(unauthorized());
        state->authorized = true;  // go on when resumed
        return std::optional<ApiReply>();
      },
      [&s, address](bool) { return check_refused(s, address); });
}

// The basic-auth user a request names ("-" for none).
std::string auth_user(MHD_Connection* c) {
  auto creds = header(c, MHD_HTTP_HEADER_AUTHORIZATION);
  if (!creds) return "-";
  auto parsed = parse_basic_auth(*creds);
  return parsed ? parsed->first : "-";
}

// The message of a {"error": "..."} reply, else "".
std::string error_text(const ApiReply& r) {
  return api::parse_error_json(r.text()).value_or("");
}

// What is refused of a POST /api/v1/kill when its headers are in, or
// nullopt: the Host check of every request, then the endpoint's own.
std::optional<ApiReply> kill_refusal(const Impl& s, MHD_Connection* c,
                                     std::string_view url,
                                     std::string_view method) {
  if (!host_allowed(s.hosts, header(c, MHD_HTTP_HEADER_HOST)))
    return json_error(403,
                      "Host header not allowed: use a loopback name or one "
                      "given to serve with --allowed-host");
  if (url.size() > http_limits::kMaxUriBytes)
    return json_error(414, "request URI too long");
  KillHead head;
  head.method = method;
  head.content_type = header(c, MHD_HTTP_HEADER_CONTENT_TYPE);
  head.kill_header = header(c, kKillHeader);
  head.content_length = header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
  head.transfer_encoding =
      header(c, MHD_HTTP_HEADER_TRANSFER_ENCODING).has_value();
  return kill_head_refusal(head, s.kill && s.kill->enabled());
}

// Queues a reply; every reply to POST /api/v1/kill is logged, refused
// ones included (who, from where, what, and what came of it).
MHD_Result answer(MHD_Connection* c, RequestState* state, ApiReply reply) {
  if (state->kill) {
    // A user is named as such once the password was checked; before that
    // (a request refused earlier) only as what the request claims.
    const std::string user = auth_user(c);
    const std::string who = state->authorized ? "user=" + serve_log::q(user)
                            : user == "-"
                                ? "user=-"
                                : "unverified_user=" + serve_log::q(user);
    const std::string error = error_text(reply);
    const auto level =
        reply.status == 200 ? spdlog::level::info : spdlog::level::warn;
    spdlog::log(level, "msg=\"remote kill\" client={} {} status={}{}{}",
                serve_log::q(client_address(c)), who, reply.status,
                state->kill_log.empty() ? "" : " " + state->kill_log,
                error.empty() ? "" : " error=" + serve_log::q(error));
  }
  return queue(c, std::move(reply));
}

// A streamed kill reply's side in the HTTP layer. begin() hands the
// connection, suspended while the plan was made, back to the event loop
// with state->kill_stream set, and on_request queues the streamed
// response. From then on the session writes to the buffer only: the
// connection (and `state`) may go away with the client at any time.
class KillStream : public KillReplyStream {
 public:
  KillStream(Impl& s, MHD_Connection* c, RequestState* state)
      : s_(s), c_(c), state_(state) {}
  void begin() override {
    buffer_ =
        std::make_shared<ParkedBuffer>(http_limits::kKillStreamBufferBytes);
    {
      std::lock_guard lock(s_.streams_mu);
      s_.kill_stream = buffer_;
    }
    state_->kill_stream = buffer_;
    state_ = nullptr;
    MHD_resume_connection(c_);
  }
  void write(std::string line) override { buffer_->put(line); }
  bool begun() const { return buffer_ != nullptr; }
  // The last line, and the end of the reply.
  void finish(const std::string& last) {
    buffer_->put(last);
    buffer_->finish();
    std::lock_guard lock(s_.streams_mu);
    if (s_.kill_stream == buffer_) s_.kill_stream.reset();
  }

 private:
  Impl& s_;
  MHD_Connection* c_;
  RequestState* state_;
  std::shared_ptr<ParkedBuffer> buffer_;
};

// POST /api/v1/kill once its body is in and auth passed: on the slow pool
// (a kill waits seconds for exits and memory), resumed with the reply, or,
// streamed, resumed as the first signal is about to go.
MHD_Result run_kill(Impl& s, MHD_Connection* c, RequestState* state) {
  // (A suspended connection is not idle: libmicrohttpd's idle timeout
  // does not close it while the session runs past kIdleTimeoutS.)
  KillCaller who{auth_user(c), client_address(c)};
  std::shared_ptr<const TraceHeader> header = s.box.get()->header;
  if (!header) header = std::make_shared<const TraceHeader>();
  run_slow(s, c, state,
           [&s, c, state, who = std::move(who),
            header = std::move(header)](bool& resumed) {
             KillStream stream(s, c, state);
             KillApiResult result =
                 s.kill->handle(state->body, *header, who, &stream);
             if (!stream.begun()) {
               state->kill_log = std::move(result.log_fields);
               return std::optional<ApiReply>(std::move(result.reply));
             }
             resumed = true;  // by begin()
             // Logged here: the reply was queued (200) before the session
             // ran.
             spdlog::info("msg=\"remote kill\" client={} user={} status=200 {}",
                          serve_log::q(who.address), serve_log::q(who.user),
                          result.log_fields);
             stream.finish(result.reply.body);
             return std::optional<ApiReply>();
           });
  return MHD_YES;
}

// The streamed kill reply, once its session began.
MHD_Result queue_kill_stream(MHD_Connection* c,
                             std::shared_ptr<ParkedBuffer> buffer) {
  buffer->set_hooks([c] { MHD_suspend_connection(c); },
                    [c] { MHD_resume_connection(c); });
  return queue_produced(c, new std::shared_ptr<ParkedBuffer>(std::move(buffer)),
                        16 * 1024, read_parked<ParkedBuffer>,
                        free_parked<ParkedBuffer>,
                        "application/x-ndjson; charset=utf-8");
}

// /api/v1/events: a Server-Sent Events stream read on the event loop. When
// the stream has nothing queued its reader suspends the connection (no
// busy loop, no thread); the hub resumes it when it queues the next event.
ssize_t read_events(void* cls, uint64_t, char* buf, size_t max) {
  auto& stream = **static_cast<std::shared_ptr<EventStream>*>(cls);
  size_t n = 0;
  switch (stream.read(buf, max, n)) {
    case EventStream::Read::kData:
      return static_cast<ssize_t>(n);
    case EventStream::Read::kWait:
      return 0;  // suspended; called again once resumed
    case EventStream::Read::kEnd:
      break;
  }
  return MHD_CONTENT_READER_END_WITH_ERROR;
}

void free_events(void* cls) {
  auto* stream = static_cast<std::shared_ptr<EventStream>*>(cls);
  (*stream)->detach();
  delete stream;
}

MHD_Result queue_events(Impl& s, MHD_Connection* c) {
  std::shared_ptr<EventStream> stream = s.events.open();
  if (!stream)
    return queue(c, json_error(503,
                               "too many live event streams open; retry "
                               "later"));
  stream->set_hooks([c] { MHD_suspend_connection(c); },
                    [c] { MHD_resume_connection(c); });
  return queue_produced(c, new std::shared_ptr<EventStream>(stream), 16 * 1024,
                        read_events, free_events,
                        "text/event-stream; charset=utf-8");
}

// A host name as a file name: letters, digits, '.', '-', '_' only.
std::string file_safe(std::string_view text) {
  std::string out;
  for (char ch : text.substr(0, 64))
    out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' ||
            ch == '-' || ch == '_')
               ? ch
               : '_';
  return out.empty() ? "node" : out;
}

MHD_Result queue_download(Impl& s, MHD_Connection* c, const QueryParams& q) {
  if (!s.history)
    return queue(c, json_error(503,
                               "history is off (serve runs with --no-db): "
                               "nothing to download"));
  const double now = unix_now();
  double since = now - 3600, until = now;
  bool zstd = true;
  try {
    auto one = [&](const char* name) -> const std::string* {
      auto r = q.equal_range(name);
      if (r.first == r.second) return nullptr;
      if (std::next(r.first) != r.second)
        throw std::invalid_argument(std::string("parameter '") + name +
                                    "' given twice");
      return &r.first->second;
    };
    if (auto* v = one("since")) since = parse_since(*v, now);
    if (auto* v = one("until")) until = parse_since(*v, now);
    if (auto* v = one("compress")) {
      if (*v == "none")
        zstd = false;
      else if (*v != "zstd")
        throw std::invalid_argument("parameter 'compress': '" + *v +
                                    "' is not zstd or none");
    }
  } catch (const std::invalid_argument& e) {
    return queue(c, json_error(400, e.what()));
  }
  if (until < since)
    return queue(c, json_error(400, "'until' is before 'since'"));
  std::shared_ptr<TraceDownload> d;
  {
    std::lock_guard lock(s.streams_mu);
    std::erase_if(s.downloads, [](const auto& x) { return x->finished(); });
    if (s.stopping) return queue(c, json_error(503, "shutting down"));
    if (s.downloads.size() >= http_limits::kMaxDownloads)
      return queue(c, json_error(503,
                                 "too many trace downloads at once; "
                                 "retry when one has finished"));
    d = std::make_shared<TraceDownload>(*s.history, since, until, zstd,
                                        http_limits::kDownloadBufferBytes);
    s.downloads.push_back(d);
  }
  d->set_hooks([c] { MHD_suspend_connection(c); },
               [c] { MHD_resume_connection(c); });
  d->start();
  const std::string host =
      file_safe(s.box.get()->header ? s.box.get()->header->host.hostname : "");
  const std::string name =
      fmt::format("gpudoctor-{}-{:.0f}-{:.0f}.jsonl{}", host, std::floor(since),
                  std::ceil(until), zstd ? ".zst" : "");
  return queue_produced(
      c, new std::shared_ptr<TraceDownload>(d), 64 * 1024,
      read_parked<TraceDownload>, free_parked<TraceDownload>,
      zstd ? "application/zstd" : "application/x-ndjson; charset=utf-8",
      {{"Content-Disposition", "attachment; filename=\"" + name + "\""}});
}

// Called once when the headers are in, once per piece of a body, and once
// when the request is complete. Replies are queued on that last call: one
// queued earlier makes libmicrohttpd close the connection after it, which
// is wanted for a body refused unread but would end keep-alive for every
// scrape.
MHD_Result on_request(void* cls, MHD_Connection* c, const char* url,
                      const char* method, const char*, const char* upload_data,
                      size_t* upload_size, void** con_cls) {
  Impl& s = *static_cast<Impl*>(cls);
  auto* state = static_cast<RequestState*>(*con_cls);
  if (!state) {  // headers are in: decide now, before any body is read
    state = new RequestState;
    *con_cls = state;
    state->kill = std::string_view(url) == kKillPath;
    if (auto refused = framing_refusal(c))
      return answer(c, state, std::move(*refused));  // and close
    if (state->kill) {                               // the one path with a body
      if (auto refused = kill_refusal(s, c, url, method)) {
        if (has_body(c) && !drainable_body(c))
          return answer(c, state, std::move(*refused));  // and close
        state->reply = std::move(*refused);
      }
      return MHD_YES;
    }
    if (auto refused = refusal(s, c, url, method)) {
      if (refused->status == 413 && !drainable_body(c))
        return queue(c, std::move(*refused));  // and close, body unread
      state->reply = std::move(*refused);
    }
    return MHD_YES;
  }
  if (*upload_size != 0) {  // a kill request's body, or one being drained
    if (state->kill && !state->reply) {
      // Content-Length was checked against the bound, and libmicrohttpd
      // never passes more than it announced; kept bounded all the same.
      if (state->body.size() + *upload_size > http_limits::kMaxKillBodyBytes)
        state->reply =
            json_error(413, fmt::format("the body is larger than {} bytes",
                                        http_limits::kMaxKillBodyBytes));
      else
        state->body.append(upload_data, *upload_size);
    }
    *upload_size = 0;
    return MHD_YES;
  }
  if (state->kill_stream)
    return queue_kill_stream(c, std::move(state->kill_stream));
  if (state->reply) return answer(c, state, std::move(*state->reply));
  if (s.auth && !state->authorized) {
    const auto creds = header(c, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!creds) return answer(c, state, unauthorized());
    const std::optional<bool> known = s.auth->known(*creds);
    if (!known) {  // bcrypt: never on the loop
      check_password(s, c, state, std::string(*creds));
      return MHD_YES;
    }
    if (!*known) return answer(c, state, unauthorized());
    state->authorized = true;
  }
  if (state->kill) return run_kill(s, c, state);
  const std::string path = url;
  if (const WebAsset* asset = find_web_asset(path))
    return queue(
        c, web_asset_reply(
               *asset, header(c, MHD_HTTP_HEADER_ACCEPT_ENCODING).value_or(""),
               header(c, MHD_HTTP_HEADER_IF_NONE_MATCH).value_or("")));
  if (path == "/api/v1/events") return queue_events(s, c);
  QueryParams q = is_route(url) ? params_of(c) : QueryParams{};
  if (path == "/api/v1/export") return queue_download(s, c, q);
  const bool gzip =
      accepts_gzip(header(c, MHD_HTTP_HEADER_ACCEPT_ENCODING).value_or(""));
  if (is_slow(path)) {  // called again, with the reply, on resume
    run_slow(s, c, state, [&s, path, q = std::move(q), gzip](bool&) {
      return std::optional<ApiReply>(guarded(s, path, q, gzip));
    });
    return MHD_YES;
  }
  return queue(c, guarded(s, path, q, gzip));
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
    : impl_(new Impl(box, history, std::move(allowed_hosts))) {}

HttpServer::~HttpServer() {
  stop();
  if (listen_fd_ >= 0) close(listen_fd_);
}

void HttpServer::bind(const std::string& host, int port) {
  impl_->hosts = host_policy_for(host, impl_->allowed_hosts);
  listen_fd_ = open_listen_socket(host, port, port_);
}

void HttpServer::enable_kill(KillApiConfig config) {
  impl_->kill = std::make_unique<KillApi>(std::move(config));
}

void HttpServer::enable_slurm(const SlurmDrainer* drainer) {
  impl_->slurm = drainer;
}

void HttpServer::enable_fleet(const FleetView* fleet) { impl_->fleet = fleet; }

void HttpServer::use_web_config(WebConfig web) {
  if (!web.basic_auth_users.empty())
    impl_->auth = std::make_unique<BasicAuth>(web.basic_auth_users);
  impl_->web = std::move(web);
}

void HttpServer::start() {
  slow_pool_ = std::make_unique<BoundedPool>(http_limits::kSlowThreads,
                                             http_limits::kSlowQueue);
  impl_->slow_pool = slow_pool_.get();
  auth_pool_ = std::make_unique<FairPool>(http_limits::kAuthThreads,
                                          http_limits::kAuthQueue,
                                          http_limits::kAuthQueuePerAddress);
  impl_->auth_pool = auth_pool_.get();
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
  // The pool and the event streams first: every suspended connection is
  // resumed (with its reply, 503 or the end of its stream) before the
  // daemon stops, which it requires.
  impl_->events.close_all();
  std::vector<std::shared_ptr<TraceDownload>> downloads;
  std::shared_ptr<ParkedBuffer> kill_stream;
  {
    std::lock_guard lock(impl_->streams_mu);
    impl_->stopping = true;
    downloads.swap(impl_->downloads);
    kill_stream = impl_->kill_stream;
  }
  // A cancelled download or kill reply ends its stream at the next read:
  // resume any connection parked on one before the daemon stops.
  for (auto& d : downloads) d->abort();
  if (kill_stream) kill_stream->abort();
  if (impl_->kill) impl_->kill->stop();  // a kill session stops waiting
  if (slow_pool_) slow_pool_->stop();
  if (auth_pool_) auth_pool_->stop();
  if (daemon_) MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
  downloads.clear();  // joins their producers
}

bool HttpServer::healthy() const { return daemon_ != nullptr || !slow_pool_; }

EventHub& HttpServer::events() { return impl_->events; }

}  // namespace gd
