#include "monitor/remote_kill.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "api/kill_json.h"
#include "common/bounded_json.h"
#include "http_client/client.h"

namespace gd::monitor {
namespace {

using namespace procmgmt;
using namespace api;  // the request and reply (api/kill_json.h)

// A kill reply is a few KiB; a "serve" that sends more is not one.
constexpr size_t kMaxReplyBytes = 4 << 20;
// Serve answers a dry run after one sample (a GPU deadline, a /proc walk)
// and a bcrypt check.
constexpr double kPlanReplyS = 30;
// A kill takes up to TERM's wait, KILL's wait and NVML's wait; the rest is
// slack for the samples in between.
constexpr double kRunSlackS = 30;

// The error text of a serve reply ({"error": "..."}), cut to one line.
std::string error_of(const std::string& body) {
  nlohmann::json j;
  try {
    j = parse_bounded_json(body);
  } catch (const JsonTooDeep&) {
  }
  std::string text;
  if (j.is_object() && j.contains("error") && j["error"].is_string())
    text = j["error"].get<std::string>();
  if (text.size() > 300) text.resize(300);
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text.empty() ? "no reason given" : text;
}

class RemoteKill : public KillBackend {
 public:
  explicit RemoteKill(RemoteOptions o)
      : o_(std::move(o)), url_(parse_remote_url(o_.url)) {}

  Planned plan(const std::vector<uint32_t>& pids,
               const KillJobOptions& options) override {
    KillApiRequest req = request(options);
    req.request.pids = pids;
    req.dry_run = true;
    KillApiReply r = post(req, kPlanReplyS);
    plan_id_ = r.plan_id;
    pids_ = pids;
    Planned p;
    p.plan = std::move(r.plan);
    // The dialog's GPU-MEM column reads the memory from a sample: one made
    // of what serve listed for each planned process.
    GpuSample g;
    g.processes.emplace();
    for (const auto& [pid, bytes] : r.gpu_memory)
      g.processes->push_back({pid, bytes, "compute"});
    p.before.gpus.push_back(std::move(g));
    // The refusal lines name each refused process's command.
    std::vector<ProcEntry> named;
    for (const auto& [pid, command] : r.refused_commands) {
      ProcEntry e;
      e.pid = pid;
      e.cmdline = command;
      named.push_back(std::move(e));
    }
    p.procs = ProcSnapshot::from_entries(std::move(named));
    return p;
  }

  KillOutcome run(const KillJobOptions& options,
                  KillObserver& observer) override {
    KillApiRequest req = request(options);
    req.request.pids = pids_;
    req.plan_id = plan_id_;
    req.stream = true;  // each step shown as serve takes it
    const double reply_s = 3 * options.timeout_s + kRunSlackS + kPlanReplyS;
    KillApiReply r;
    try {
      r = post(req, reply_s, &observer);
    } catch (const OlderServe&) {
      // A serve from before streamed replies: the steps come with the
      // reply, at the end.
      req.stream = false;
      r = post(req, reply_s, &observer);
    }
    if (!r.outcome) {
      // The plan serve made at the yes was refused or had nothing to do.
      std::string why = r.message;
      if (!r.plan.refusals.empty())
        why += " " + std::to_string(r.plan.refusals.front().pid) + ": " +
               r.plan.refusals.front().reason;
      throw std::runtime_error("serve sent nothing: " + why);
    }
    return std::move(*r.outcome);
  }

  std::string where() const override { return o_.url; }

  // Serve goes on with a kill it started; only the waiting for its reply
  // ends.
  void cancel() override { cancel_.cancel(); }

 private:
  static KillApiRequest request(const KillJobOptions& options) {
    KillApiRequest req;
    req.signal = options.signal;
    req.timeout_s = options.timeout_s;
    req.force = options.force;
    return req;
  }

  // A 400 that names "stream" as an unknown key.
  struct OlderServe {};

  static void notify(KillObserver& observer, const KillStep& s) {
    if (s.escalation)
      observer.on_escalate(s.alive, s.timeout_s);
    else
      observer.on_signal(s.pid, s.sig, s.error);
  }

  // With `live`, the reply's steps go to it: as their lines arrive when
  // streamed, else once the whole reply is in. `reply_s` bounds the whole
  // request.
  KillApiReply post(const KillApiRequest& req, double reply_s,
                    KillObserver* live = nullptr) {
    http::Request http;
    http.method = "POST";
    http.path = "/api/v1/kill";
    http.headers = {{"X-Gpudoctor-Kill", "1"}};
    http.content_type = "application/json";
    http.body = kill_api_request_json(req);
    http.total_s = reply_s;
    http.max_body_bytes = kMaxReplyBytes;
    std::string body;
    bool lines = false;
    std::optional<KillApiReply> last;
    std::string bad_line;
    http.on_head = [&](const http::Reply& head) {
      lines = live && head.status == 200 &&
              head.header("Content-Type").rfind("application/x-ndjson", 0) == 0;
      return true;
    };
    http.on_body = [&](std::string_view data) {
      body.append(data);
      // Streamed: each complete line is taken as it arrives.
      for (size_t nl; lines && (nl = body.find('\n')) != std::string::npos;
           body.erase(0, nl + 1)) {
        try {
          KillStreamLine line =
              parse_kill_api_stream_line(std::string_view(body).substr(0, nl));
          if (line.step) notify(*live, *line.step);
          if (line.reply) last = std::move(line.reply);
        } catch (const std::runtime_error& e) {
          bad_line = e.what();
          return false;
        }
      }
      return true;
    };
    const http::Reply res = http::send(url_, o_.who, http, cancel_);
    if (!bad_line.empty()) throw std::runtime_error(bad_line);
    if (!res.ok && !last) throw std::runtime_error(res.error);
    if (lines) {
      if (!last)
        throw std::runtime_error(
            "serve's streamed kill reply ended before its outcome");
      return std::move(*last);
    }
    if (res.status == 200) {
      KillApiReply r = parse_kill_api_reply(body);
      if (live)
        for (const KillStep& s : r.steps) notify(*live, s);
      return r;
    }
    if (res.status == 400 && req.stream &&
        error_of(body).find("unknown key 'stream'") != std::string::npos)
      throw OlderServe{};
    if (res.status == 409 && !req.dry_run) {
      // The plan changed, or another kill is under way: its reason.
      std::string why = error_of(body);
      throw std::runtime_error("serve sent nothing: " + why);
    }
    std::string why = error_of(body);
    if (res.status == 401)
      why += o_.who.user.empty() ? " (give top --auth-file user:password)"
                                 : " (check --auth-file)";
    throw std::runtime_error("serve refused (HTTP " +
                             std::to_string(res.status) + "): " + why);
  }

  RemoteOptions o_;
  http::Url url_;
  http::RequestCancel cancel_;
  std::string plan_id_;
  std::vector<uint32_t> pids_;
};

}  // namespace

std::unique_ptr<KillBackend> remote_kill_backend(RemoteOptions connection) {
  return std::make_unique<RemoteKill>(std::move(connection));
}

}  // namespace gd::monitor
