#include "serve/kill_api.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <stdexcept>

#include "api/kill_json.h"
#include "collect/sampler.h"
#include "common/ascii_text.h"
#include "common/int_list.h"
#include "common/user_name.h"
#include "procmgmt/kill_plan.h"
#include "procmgmt/kill_session.h"
#include "procmgmt/kill_signal.h"
#include "procmgmt/proc_snapshot.h"
#include "serve/http_limits.h"
#include "serve/log.h"

namespace gd {
namespace {

using namespace procmgmt;
using namespace api;  // the request and reply (api/kill_json.h)

// "application/json", with parameters ("; charset=utf-8") allowed.
bool is_json_type(std::string_view type) {
  return iequals(trim(type.substr(0, type.find(';'))), "application/json");
}

std::optional<size_t> decimal(std::string_view text) {
  if (text.empty() || text.size() > 12) return std::nullopt;
  size_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  return n;
}

ApiReply with_allow_post(ApiReply r) {
  r.headers.push_back({"Allow", "POST"});
  return r;
}

// GPU memory NVML lists for each pid in `s`, over every GPU.
std::map<uint32_t, uint64_t> gpu_memory_of(const Sample& s) {
  std::map<uint32_t, uint64_t> out;
  for (const GpuSample& g : s.gpus)
    if (g.processes)
      for (const GpuProcess& p : *g.processes)
        if (p.used_bytes) out[p.pid] += *p.used_bytes;
  return out;
}

// Command lines leave serve as --show-cmdline says, here too.
void expose(ProcEntry& p, CmdlineExposure e) {
  p.cmdline = exposed_cmdline(p.cmdline, e);
}

void expose(KillPlan& plan, CmdlineExposure e) {
  for (auto& t : plan.targets) expose(t.proc, e);
  for (auto& z : plan.zombies) expose(z.proc, e);
}

void expose(KillOutcome& o, CmdlineExposure e) {
  for (auto& h : o.not_released) {
    for (auto& ap : h.account.processes) {
      // A zombie's explanation names its parent's command.
      if (ap.parent && e != CmdlineExposure::kFull) {
        const std::string full = ap.parent->command();
        ProcEntry shown = *ap.parent;
        expose(shown, e);
        if (size_t at = ap.explanation.find(full); at != std::string::npos)
          ap.explanation.replace(at, full.size(), shown.command());
        ap.parent = shown;
      }
      if (ap.proc) expose(*ap.proc, e);
    }
    for (auto& other : h.account.other_holders) expose(other.proc, e);
  }
}

// The session's steps, kept for the reply and, when streamed, written as
// they happen.
class StepLog : public KillObserver {
 public:
  explicit StepLog(KillReplyStream* stream) : stream_(stream) {}
  void on_signal(uint32_t pid, int sig, const std::string& error) override {
    add({false, pid, sig, error, 0, 0});
  }
  void on_escalate(size_t alive, double timeout_s) override {
    add({true, 0, 0, "", alive, timeout_s});
  }
  std::vector<KillStep> steps;

 private:
  void add(KillStep s) {
    if (stream_) stream_->write(kill_api_step_line(s));
    steps.push_back(std::move(s));
  }
  KillReplyStream* stream_;
};

std::string pid_list(const std::vector<uint32_t>& pids) {
  std::vector<int> v(pids.begin(), pids.end());
  return v.empty() ? "-" : join_ints(v, ",");
}

// Whether `named` (a request's "user": a login name or a uid, as `kill
// --user` takes either) is the Unix user `self`.
bool names_user(const std::string& named, const std::string& self,
                const std::function<std::string(uint32_t)>& name_of) {
  if (named == self) return true;
  uint32_t uid = 0;
  const auto [end, ec] =
      std::from_chars(named.data(), named.data() + named.size(), uid);
  return ec == std::errc() && end == named.data() + named.size() &&
         name_of(uid) == self;
}

}  // namespace

std::optional<ApiReply> kill_head_refusal(const KillHead& head, bool enabled) {
  if (!enabled)
    return json_error(403,
                      "remote kill is off on this serve: start it with "
                      "--allow-remote-kill (which needs --web-config with "
                      "basic_auth_users, and TLS when not on loopback)");
  if (head.method != "POST")
    return with_allow_post(
        json_error(405, "method not allowed (POST only, with a JSON body)"));
  if (!head.content_type || !is_json_type(*head.content_type))
    return json_error(415, "Content-Type must be application/json");
  if (!head.kill_header || trim(*head.kill_header) != "1")
    return json_error(403, std::string("the header '") + kKillHeader +
                               ": 1' is required (it keeps web pages from "
                               "sending this request)");
  if (head.transfer_encoding)
    return json_error(411, "send the body with a Content-Length, not chunked");
  if (!head.content_length) return json_error(411, "Content-Length required");
  auto n = decimal(*head.content_length);
  if (!n || *n > http_limits::kMaxKillBodyBytes)
    return json_error(413, fmt::format("the body is larger than {} bytes",
                                       http_limits::kMaxKillBodyBytes));
  return std::nullopt;
}

KillApi::KillApi(KillApiConfig config) : config_(std::move(config)) {
  if (config_.self_pid == 0) config_.self_pid = static_cast<uint32_t>(getpid());
  if (!config_.user_name_of) config_.user_name_of = gd::user_name_of;
}

void KillApi::stop() { stop_ = true; }

KillApiResult KillApi::handle(std::string_view body, const TraceHeader& header,
                              const KillCaller& who, KillReplyStream* stream) {
  {
    std::lock_guard lock(mu_);
    if (busy_)
      return {
          json_error(409, fmt::format("another remote kill is under way (asked "
                                      "{:.0f} s ago by {}); retry when it has "
                                      "finished",
                                      unix_now() - busy_since_, busy_by_)),
          "busy=true"};
    busy_ = true;
    busy_by_ = who.user + " from " + who.address;
    busy_since_ = unix_now();
  }
  struct Release {
    KillApi& api;
    ~Release() {
      std::lock_guard lock(api.mu_);
      api.busy_ = false;
    }
  } release{*this};
  return run(body, header, who, stream);
}

KillApiResult KillApi::run(std::string_view body, const TraceHeader& header,
                           const KillCaller& who, KillReplyStream* stream) {
  KillApiRequest req;
  try {
    req = parse_kill_api_request(body);
  } catch (const std::invalid_argument& e) {
    return {json_error(400, std::string("kill request: ") + e.what()),
            "bad_request=true"};
  }
  if (config_.admins &&
      std::find(config_.admins->begin(), config_.admins->end(), who.user) ==
          config_.admins->end()) {
    if (!req.request.user.empty() &&
        !names_user(req.request.user, who.user, config_.user_name_of))
      return {json_error(403, fmt::format("'{}' may end only the processes of "
                                          "the Unix user '{}' (serve "
                                          "--remote-kill-admins names who may "
                                          "end others')",
                                          who.user, who.user)),
              "not_admin=true"};
    // Its own user by uid stays a uid: the plan matches processes by it.
    if (req.request.user.empty()) req.request.user = who.user;
  }
  std::string fields = fmt::format(
      "dry_run={} pids={} gpu={} only_user={} signal={} timeout_s={:g} "
      "force={} tree={} any={}",
      req.dry_run, pid_list(req.request.pids),
      req.request.gpus.empty() ? "-" : join_ints(req.request.gpus, ","),
      serve_log::q(req.request.user.empty() ? "-" : req.request.user),
      signal_name(req.signal), req.timeout_s, req.force, req.request.tree,
      req.request.any);
  auto before = config_.fresh_sample ? config_.fresh_sample() : nullptr;
  if (!before)
    return {json_error(503, "no sample yet; retry in a moment"), fields};

  const ProcSnapshot procs = ProcSnapshot::read(config_.proc_root);
  const KillContext ctx =
      make_kill_context(config_.self_pid, header, *before, procs,
                        config_.proc_root, config_.dev_prefix);
  const KillPlan plan = plan_kill(req.request, ctx, procs);

  KillApiReply r;
  r.dry_run = req.dry_run;
  r.signal = req.signal;
  r.timeout_s = req.timeout_s;
  r.force = req.force;
  r.plan = plan;
  r.plan_id = kill_plan_id(plan);
  expose(r.plan, config_.show_cmdline);
  const auto memory = gpu_memory_of(*before);
  for (const auto* list : {&plan.targets, &plan.zombies})
    for (const auto& t : *list)
      if (auto m = memory.find(t.proc.pid); m != memory.end())
        r.gpu_memory[t.proc.pid] = m->second;
  for (const auto& x : plan.refusals)
    if (const ProcEntry* p = procs.find(x.pid)) {
      ProcEntry shown = *p;
      expose(shown, config_.show_cmdline);
      r.refused_commands[x.pid] = shown.command();
    }

  int status = 200;
  if (!plan.not_found.empty()) {
    r.exit_code = kKillExitError;
    r.message =
        "No such process: " + pid_list(plan.not_found) + ". Nothing was sent.";
  } else if (!plan.refusals.empty()) {
    r.exit_code = kKillExitRefused;
    r.message = "Refused, nothing was sent.";
  } else if (plan.targets.empty() && plan.zombies.empty()) {
    r.exit_code = plan.notes.empty() ? kKillExitReleased : kKillExitNotReleased;
    r.message = "Nothing to signal.";
  } else if (req.dry_run) {
    r.exit_code = kKillExitReleased;
    r.message = "Dry run: nothing was sent.";
  } else if (!req.plan_id.empty() && req.plan_id != r.plan_id) {
    status = 409;
    r.exit_code = kKillExitRefused;
    r.error =
        "the plan changed since it was shown (a process exited, or a pid now "
        "names another process): nothing was sent; look at the new plan";
    r.message = "Nothing was sent.";
  } else {
    KillSessionOptions o;
    o.proc_root = config_.proc_root;
    o.dev_prefix = config_.dev_prefix;
    o.signal = req.signal;
    o.timeout_s = req.timeout_s;
    o.force = req.force;
    Requester requester = Requester::current();
    requester.tty = "none";
    requester.remote = "remote user " + who.user + " from " + who.address;
    o.requester = requester;
    o.stop = &stop_;
    if (!req.stream) stream = nullptr;
    if (stream) stream->begin();
    StepLog log(stream);
    KillOutcome outcome = run_kill_session(
        plan, ctx, procs, *before, header,
        [this, &before] {
          auto s = config_.fresh_sample();
          return s ? *s : *before;
        },
        o, log);
    expose(outcome, config_.show_cmdline);
    r.steps = std::move(log.steps);
    r.exit_code = outcome.exit_code();
    r.message = kill_result_message(outcome.result);
    r.outcome = std::move(outcome);
  }
  size_t sent = 0;
  for (const auto& s : r.steps)
    if (!s.escalation && s.error.empty()) ++sent;
  fields += fmt::format(" plan_id={} signals_sent={} exit_code={} result={}",
                        r.plan_id.empty() ? "-" : r.plan_id, sent, r.exit_code,
                        serve_log::q(r.message));
  if (r.outcome && stream)
    return {{status, "application/x-ndjson", kill_api_reply_line(r)},
            fields + " streamed=true"};
  return {{status, "application/json", kill_api_reply_json(r)}, fields};
}

}  // namespace gd
