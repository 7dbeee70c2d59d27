#include "api/kill_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "api/json_read.h"
#include "common/bounded_json.h"
#include "common/duration.h"
#include "trace/json_out.h"

namespace gd::api {

// The plan and its steps are procmgmt's types; this file only carries them.
using namespace procmgmt;

namespace {

// Adds `gpu` to a request's GPUs once ("gpu": 1 with "gpus": [1, 2]).
void add_gpu(GpuSelection& gpus, int gpu) {
  if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end())
    gpus.push_back(gpu);
}

using nlohmann::json;
namespace jo = json_out;

constexpr size_t kMaxUserBytes = 64;
constexpr size_t kMaxPlanIdBytes = 64;

// Bounds of a reply: far beyond a real plan (a GPU of a busy node has a few
// hundred processes), so that a hostile "serve" cannot make top hold more.
constexpr size_t kMaxReplyItems = 65536;
constexpr size_t kMaxReplyText = 16 * 1024;

// Commands and user names are untrusted bytes: json_out replaces invalid
// UTF-8, never throws on it. Keys are written in the order serve has always
// sent them (nlohmann's sorted order, before json_out).

void append_state(std::string& out, char state) {
  jo::string(out, std::string_view(&state, 1));
}

// --- the request ---------------------------------------------------------

[[noreturn]] void bad_request(const std::string& why) {
  throw std::invalid_argument(why);
}

bool boolean(const json& v, const char* key) {
  if (!v.is_boolean())
    bad_request(fmt::format("'{}' must be true or false", key));
  return v.get<bool>();
}

uint64_t unsigned_in(const json& v, const std::string& what, uint64_t lo,
                     uint64_t hi) {
  if (!v.is_number_unsigned() || v.get<uint64_t>() < lo ||
      v.get<uint64_t>() > hi)
    bad_request(fmt::format("{} must be an integer {}..{}", what, lo, hi));
  return v.get<uint64_t>();
}

int request_signal(const json& v) {
  if (v.is_number_unsigned()) {
    const uint64_t n = v.get<uint64_t>();
    if (n == SIGTERM || n == SIGKILL) return static_cast<int>(n);
  } else if (v.is_string()) {
    const auto s = parse_signal(v.get<std::string>());
    if (s && (*s == SIGTERM || *s == SIGKILL)) return *s;
  }
  bad_request("'signal' must be \"TERM\" or \"KILL\"");
}

double request_timeout(const json& v) {
  std::optional<double> s;
  if (v.is_number()) {
    s = v.get<double>();
  } else if (v.is_string()) {
    s = try_parse_duration(v.get<std::string>());
  }
  if (!s || !std::isfinite(*s) || *s < 0 || *s > kKillApiMaxTimeoutS)
    bad_request(fmt::format(
        "'timeout' must be seconds or a duration (\"10s\") from 0 to {:g}s",
        kKillApiMaxTimeoutS));
  return *s;
}

std::string short_text(const json& v, const char* key, size_t max) {
  if (!v.is_string()) bad_request(fmt::format("'{}' must be a string", key));
  std::string s = v.get<std::string>();
  if (s.size() > max)
    bad_request(fmt::format("'{}' is longer than {} bytes", key, max));
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f)
      bad_request(fmt::format("'{}' has a control character", key));
  return s;
}

// --- the reply -----------------------------------------------------------

[[noreturn]] void bad_reply(const std::string& why) {
  throw std::runtime_error("kill reply: " + why);
}

// A reply from the network, refused when nested deeper than kMaxJsonDepth
// (reply_from recurses once per level).
json parse_reply_json(std::string_view text) {
  try {
    return parse_bounded_json(text);
  } catch (const JsonTooDeep& e) {
    bad_reply(e.what());
  }
}

// Cuts `s` to at most `max` bytes without splitting a UTF-8 character
// (what the parser accepted is valid UTF-8, and stays so).
void cut(std::string& s, size_t max) {
  if (s.size() <= max) return;
  size_t end = max;
  size_t lead = end;
  while (lead > 0 && (static_cast<unsigned char>(s[lead - 1]) & 0xC0) == 0x80)
    --lead;
  if (lead > 0) {
    const unsigned char c = static_cast<unsigned char>(s[lead - 1]);
    const size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (lead - 1 + len > end) end = lead - 1;
  }
  s.resize(end);
}

const json* member(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

std::string text(const json& j, const char* key, size_t max = kMaxReplyText) {
  const json* v = member(j, key);
  if (!v) return "";
  if (!v->is_string()) bad_reply(fmt::format("'{}' is not a string", key));
  std::string s = v->get<std::string>();
  cut(s, max);
  return s;
}

uint64_t number(const json& j, const char* key, uint64_t max) {
  const json* v = member(j, key);
  if (!v) return 0;
  if (!v->is_number_unsigned() || v->get<uint64_t>() > max)
    bad_reply(fmt::format("'{}' is not an integer 0..{}", key, max));
  return v->get<uint64_t>();
}

std::optional<uint64_t> optional_count(const json& j, const char* key) {
  const json* v = member(j, key);
  if (!v) return std::nullopt;
  if (!v->is_number_unsigned())
    bad_reply(fmt::format("'{}' is not a non-negative integer", key));
  return v->get<uint64_t>();
}

uint32_t pid_of(const json& j, const char* key = "pid") {
  return static_cast<uint32_t>(number(j, key, kMaxPid));
}

bool kill_flag(const json& j, const char* key) {
  const json* v = member(j, key);
  if (!v) return false;
  if (!v->is_boolean()) bad_reply(fmt::format("'{}' is not a boolean", key));
  return v->get<bool>();
}

const json& items(const json& j, const char* key) {
  static const json kEmpty = json::array();
  const json* v = member(j, key);
  if (!v) return kEmpty;
  if (!v->is_array()) bad_reply(fmt::format("'{}' is not a list", key));
  if (v->size() > kMaxReplyItems)
    bad_reply(fmt::format("'{}' has more than {} items", key, kMaxReplyItems));
  return *v;
}

const json& object(const json& v, const char* what) {
  if (!v.is_object())
    bad_reply(fmt::format("an item of '{}' is not an object", what));
  return v;
}

char state_letter(const std::string& s) { return s.size() == 1 ? s[0] : '?'; }

// --- both ----------------------------------------------------------------

void append_proc(std::string& out, const KillTarget& t,
                 const std::map<uint32_t, uint64_t>& mem) {
  const ProcEntry& p = t.proc;
  jo::lit(out, "{\"comm\":");
  jo::string(out, p.comm);
  jo::lit(out, ",\"command\":");
  jo::string(out, p.command());
  jo::lit(out, ",\"gpu_memory_bytes\":");
  auto m = mem.find(p.pid);
  if (m == mem.end()) {
    jo::null(out);
  } else {
    jo::unsigned_integer(out, m->second);
  }
  jo::lit(out, ",\"gpus\":[");
  for (size_t i = 0; i < t.gpus.size(); ++i) {
    if (i) out += ',';
    jo::integer(out, t.gpus[i]);
  }
  jo::lit(out, "],\"pid\":");
  jo::unsigned_integer(out, p.pid);
  jo::lit(out, ",\"ppid\":");
  jo::unsigned_integer(out, p.ppid);
  jo::lit(out, ",\"role\":");
  jo::string(out, t.role);
  jo::lit(out, ",\"start_time\":");
  jo::unsigned_integer(out, p.starttime);
  jo::lit(out, ",\"state\":");
  append_state(out, p.state);
  jo::lit(out, ",\"uid\":");
  jo::value(out, p.uid);
  jo::lit(out, ",\"user\":");
  jo::string(out, p.user);
  out += '}';
}

KillTarget proc_from(const json& item, std::map<uint32_t, uint64_t>& mem) {
  const json& j = object(item, "targets");
  KillTarget t;
  ProcEntry& p = t.proc;
  p.pid = pid_of(j);
  p.ppid = pid_of(j, "ppid");
  if (auto uid = optional_count(j, "uid"); uid && *uid <= UINT32_MAX)
    p.uid = static_cast<uint32_t>(*uid);
  p.user = text(j, "user", 256);
  p.state = state_letter(text(j, "state", 8));
  p.comm = text(j, "comm", 256);
  p.cmdline = text(j, "command");
  p.starttime = optional_count(j, "start_time").value_or(0);
  t.role = text(j, "role", 1024);
  for (const json& g : items(j, "gpus")) {
    if (!g.is_number_unsigned() || g.get<uint64_t>() > kMaxGpu)
      bad_reply("a GPU index is not an integer 0..1023");
    t.gpus.push_back(g.get<int>());
  }
  if (auto m = optional_count(j, "gpu_memory_bytes")) mem[p.pid] = *m;
  return t;
}

const char* result_name(KillResult r) {
  switch (r) {
    case KillResult::kReleased:
      return "released";
    case KillResult::kNoneOnGpu:
      return "none_on_gpu";
    case KillResult::kStillAlive:
      return "still_alive";
    case KillResult::kNotReleased:
      return "not_released";
  }
  return "?";
}

KillResult result_from(const std::string& s) {
  for (KillResult r : {KillResult::kReleased, KillResult::kNoneOnGpu,
                       KillResult::kStillAlive, KillResult::kNotReleased})
    if (s == result_name(r)) return r;
  bad_reply("unknown outcome '" + s.substr(0, 32) + "'");
}

void append_held(std::string& out, const HeldMemory& h) {
  // The accounted process of its pid (the last one, as before), if any.
  const AccountedProcess* own = nullptr;
  for (const auto& ap : h.account.processes)
    if (ap.pid == h.pid) own = &ap;
  out += '{';
  if (own) {
    jo::lit(out, "\"action\":");
    jo::string(out, own->action);
    jo::lit(out, ",\"explanation\":");
    jo::string(out, own->explanation);
    out += ',';
  }
  jo::lit(out, "\"gpu\":");
  jo::integer(out, h.gpu);
  jo::lit(out, ",\"gpu_users\":");
  jo::unsigned_list(out, h.gpu_users);
  jo::lit(out, ",\"next\":");
  jo::string(out, h.next);
  jo::lit(out, ",\"other_holders\":[");
  for (size_t i = 0; i < h.account.other_holders.size(); ++i) {
    const ProcEntry& p = h.account.other_holders[i].proc;
    if (i) out += ',';
    jo::lit(out, "{\"command\":");
    jo::string(out, p.command());
    jo::lit(out, ",\"pid\":");
    jo::unsigned_integer(out, p.pid);
    jo::lit(out, ",\"state\":");
    append_state(out, p.state);
    jo::lit(out, ",\"user\":");
    jo::string(out, p.user);
    out += '}';
  }
  jo::lit(out, "],\"pid\":");
  jo::unsigned_integer(out, h.pid);
  if (own) {
    jo::lit(out, ",\"status\":");
    jo::string(out, holder_status_name(own->status));
  }
  if (h.unlisted_bytes) {
    jo::lit(out, ",\"unlisted_bytes\":");
    jo::unsigned_integer(out, *h.unlisted_bytes);
  }
  if (own) {
    jo::lit(out, ",\"used_bytes\":");
    jo::value(out, own->used_bytes);
  }
  out += '}';
}

HolderStatus status_from(const std::string& s) {
  for (HolderStatus h : {HolderStatus::kLive, HolderStatus::kUninterruptible,
                         HolderStatus::kZombie, HolderStatus::kMissing})
    if (s == holder_status_name(h)) return h;
  bad_reply("unknown holder status '" + s.substr(0, 32) + "'");
}

HeldMemory held_from(const json& item) {
  const json& j = object(item, "not_released");
  HeldMemory h;
  h.pid = pid_of(j);
  h.gpu = static_cast<int>(number(j, "gpu", kMaxGpu));
  h.next = text(j, "next");
  h.account.gpu = h.gpu;
  if (member(j, "status")) {
    AccountedProcess ap;
    ap.pid = h.pid;
    ap.status = status_from(text(j, "status", 32));
    ap.used_bytes = optional_count(j, "used_bytes");
    ap.explanation = text(j, "explanation");
    ap.action = text(j, "action");
    h.account.processes.push_back(std::move(ap));
  }
  for (const json& o : items(j, "other_holders")) {
    const json& oj = object(o, "other_holders");
    OtherHolder other;
    other.proc.pid = pid_of(oj);
    other.proc.user = text(oj, "user", 256);
    other.proc.state = state_letter(text(oj, "state", 8));
    other.proc.cmdline = text(oj, "command");
    h.account.other_holders.push_back(std::move(other));
  }
  for (const json& p : items(j, "gpu_users")) {
    if (!p.is_number_unsigned() || p.get<uint64_t>() > kMaxPid)
      bad_reply("a pid in 'gpu_users' is not a pid");
    h.gpu_users.push_back(p.get<uint32_t>());
  }
  h.unlisted_bytes = optional_count(j, "unlisted_bytes");
  return h;
}

void append_outcome(std::string& out, const KillOutcome& o) {
  jo::lit(out, "{\"memory\":[");
  for (size_t i = 0; i < o.memory.size(); ++i) {
    const auto& m = o.memory[i];
    if (i) out += ',';
    jo::lit(out, "{\"after_bytes\":");
    jo::value(out, m.after);
    jo::lit(out, ",\"before_bytes\":");
    jo::value(out, m.before);
    jo::lit(out, ",\"gpu\":");
    jo::integer(out, m.gpu);
    out += '}';
  }
  jo::lit(out, "],\"not_released\":[");
  for (size_t i = 0; i < o.not_released.size(); ++i) {
    if (i) out += ',';
    append_held(out, o.not_released[i]);
  }
  jo::lit(out, "],\"result\":");
  jo::string(out, result_name(o.result));
  jo::lit(out, ",\"still_alive\":[");
  for (size_t i = 0; i < o.still_alive.size(); ++i) {
    const auto& p = o.still_alive[i];
    if (i) out += ',';
    jo::lit(out, "{\"pid\":");
    jo::unsigned_integer(out, p.pid);
    jo::lit(out, ",\"state\":");
    append_state(out, p.state);
    jo::lit(out, ",\"why\":");
    jo::string(out, p.why);
    out += '}';
  }
  jo::lit(out, "]}");
}

KillOutcome outcome_from(const json& v) {
  if (!v.is_object()) bad_reply("'outcome' is not an object");
  KillOutcome o;
  o.result = result_from(text(v, "result", 32));
  for (const json& item : items(v, "still_alive")) {
    const json& j = object(item, "still_alive");
    o.still_alive.push_back(
        {pid_of(j), state_letter(text(j, "state", 8)), text(j, "why")});
  }
  for (const json& item : items(v, "memory")) {
    const json& j = object(item, "memory");
    o.memory.push_back({static_cast<int>(number(j, "gpu", kMaxGpu)),
                        optional_count(j, "before_bytes"),
                        optional_count(j, "after_bytes")});
  }
  for (const json& item : items(v, "not_released"))
    o.not_released.push_back(held_from(item));
  return o;
}

void append_step(std::string& out, const KillStep& s) {
  if (s.escalation) {
    jo::lit(out, "{\"alive\":");
    jo::unsigned_integer(out, s.alive);
    jo::lit(out, ",\"escalation\":true,\"timeout_s\":");
    jo::number(out, s.timeout_s);
    out += '}';
    return;
  }
  jo::lit(out, "{\"error\":");
  jo::string(out, s.error);
  jo::lit(out, ",\"pid\":");
  jo::unsigned_integer(out, s.pid);
  jo::lit(out, ",\"signal\":");
  jo::string(out, signal_name(s.sig));
  out += '}';
}

KillStep step_from(const json& item) {
  const json& j = object(item, "steps");
  KillStep s;
  s.escalation = kill_flag(j, "escalation");
  if (s.escalation) {
    s.alive = static_cast<size_t>(number(j, "alive", kMaxReplyItems));
    const json* t = member(j, "timeout_s");
    if (t &&
        (!t->is_number() || t->get<double>() < 0 || t->get<double>() > 3600))
      bad_reply("'timeout_s' of a step is not 0..3600");
    s.timeout_s = t ? t->get<double>() : 0;
    return s;
  }
  s.pid = pid_of(j);
  auto sig = parse_signal(text(j, "signal", 32));
  if (!sig) bad_reply("a step names an unknown signal");
  s.sig = *sig;
  s.error = text(j, "error", 1024);
  return s;
}

}  // namespace

std::string kill_api_request_json(const KillApiRequest& r) {
  std::string out;
  out += '{';
  if (r.request.any) jo::lit(out, "\"any\":true,");
  jo::lit(out, "\"dry_run\":");
  jo::boolean(out, r.dry_run);
  jo::lit(out, ",\"force\":");
  jo::boolean(out, r.force);
  // One GPU as "gpu" (what every reader knows); several as "gpus".
  if (r.request.gpus.size() == 1) {
    jo::lit(out, ",\"gpu\":");
    jo::integer(out, r.request.gpus[0]);
  } else if (!r.request.gpus.empty()) {
    jo::lit(out, ",\"gpus\":[");
    for (size_t i = 0; i < r.request.gpus.size(); ++i) {
      if (i) out += ',';
      jo::integer(out, r.request.gpus[i]);
    }
    out += ']';
  }
  if (!r.request.pids.empty()) {
    jo::lit(out, ",\"pids\":");
    jo::unsigned_list(out, r.request.pids);
  }
  if (!r.plan_id.empty()) {
    jo::lit(out, ",\"plan_id\":");
    jo::string(out, r.plan_id);
  }
  if (r.signal == SIGKILL) {
    jo::lit(out, ",\"signal\":\"KILL\"");
  } else {
    jo::lit(out, ",\"signal\":\"TERM\"");
  }
  if (r.stream) jo::lit(out, ",\"stream\":true");
  jo::lit(out, ",\"timeout\":");
  jo::number(out, r.timeout_s);
  if (r.request.tree) jo::lit(out, ",\"tree\":true");
  if (!r.request.user.empty()) {
    jo::lit(out, ",\"user\":");
    jo::string(out, r.request.user);
  }
  out += '}';
  return out;
}

KillApiRequest parse_kill_api_request(std::string_view body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) bad_request("the body is not JSON");
  if (!j.is_object()) bad_request("the body is not a JSON object");
  KillApiRequest r;
  for (const auto& [key, v] : j.items()) {
    if (key == "pids") {
      if (!v.is_array()) bad_request("'pids' must be a list of pids");
      if (v.size() > kKillApiMaxPids)
        bad_request(
            fmt::format("'pids': at most {} per request", kKillApiMaxPids));
      for (const json& p : v)
        r.request.pids.push_back(
            static_cast<uint32_t>(unsigned_in(p, "each pid", 1, kMaxPid)));
    } else if (key == "gpu") {
      add_gpu(r.request.gpus,
              static_cast<int>(unsigned_in(v, "'gpu'", 0, kMaxGpu)));
    } else if (key == "gpus") {
      if (!v.is_array()) bad_request("'gpus' must be a list of GPU indices");
      if (v.size() > kKillApiMaxGpus)
        bad_request(
            fmt::format("'gpus': at most {} per request", kKillApiMaxGpus));
      for (const json& g : v)
        add_gpu(r.request.gpus,
                static_cast<int>(unsigned_in(g, "each GPU", 0, kMaxGpu)));
    } else if (key == "user") {
      r.request.user = short_text(v, "user", kMaxUserBytes);
    } else if (key == "tree") {
      r.request.tree = boolean(v, "tree");
    } else if (key == "any") {
      r.request.any = boolean(v, "any");
    } else if (key == "signal") {
      r.signal = request_signal(v);
    } else if (key == "timeout") {
      r.timeout_s = request_timeout(v);
    } else if (key == "force") {
      r.force = boolean(v, "force");
    } else if (key == "dry_run") {
      r.dry_run = boolean(v, "dry_run");
    } else if (key == "plan_id") {
      r.plan_id = short_text(v, "plan_id", kMaxPlanIdBytes);
    } else if (key == "stream") {
      r.stream = boolean(v, "stream");
    } else {
      bad_request(fmt::format(
          "unknown key '{}' (known: pids, gpu, gpus, user, tree, any, signal, "
          "timeout, force, dry_run, plan_id, stream)",
          key.substr(0, 40)));
    }
  }
  if (r.request.pids.empty() && r.request.gpus.empty())
    bad_request("name the processes: 'pids' (a list), 'gpu' or 'gpus'");
  return r;
}

std::string kill_plan_id(const KillPlan& plan) {
  if (plan.targets.empty()) return "";
  std::vector<std::pair<uint32_t, uint64_t>> ids;
  for (const auto& t : plan.targets)
    ids.emplace_back(t.proc.pid, t.proc.starttime);
  std::sort(ids.begin(), ids.end());
  // FNV-1a over "pid.start," of each: a check that the processes shown are
  // the ones signalled, not a secret (the caller is already trusted).
  uint64_t h = 14695981039346656037ull;
  for (const auto& [pid, start] : ids)
    for (char c : fmt::format("{}.{},", pid, start)) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ull;
    }
  return fmt::format("{:016x}", h);
}

std::string kill_api_reply_json(const KillApiReply& r) {
  std::string out;
  jo::lit(out, "{\"dry_run\":");
  jo::boolean(out, r.dry_run);
  if (!r.error.empty()) {
    jo::lit(out, ",\"error\":");
    jo::string(out, r.error);
  }
  jo::lit(out, ",\"exit_code\":");
  jo::integer(out, r.exit_code);
  jo::lit(out, ",\"force\":");
  jo::boolean(out, r.force);
  jo::lit(out, ",\"message\":");
  jo::string(out, r.message);
  jo::lit(out, ",\"outcome\":");
  if (r.outcome) {
    append_outcome(out, *r.outcome);
  } else {
    jo::null(out);
  }
  jo::lit(out, ",\"plan\":{\"id\":");
  jo::string(out, r.plan_id);
  jo::lit(out, ",\"not_found\":");
  jo::unsigned_list(out, r.plan.not_found);
  jo::lit(out, ",\"notes\":[");
  for (size_t i = 0; i < r.plan.notes.size(); ++i) {
    if (i) out += ',';
    jo::string(out, r.plan.notes[i]);
  }
  jo::lit(out, "],\"refusals\":[");
  for (size_t i = 0; i < r.plan.refusals.size(); ++i) {
    const KillRefusal& x = r.plan.refusals[i];
    if (i) out += ',';
    jo::lit(out, "{\"command\":");
    auto c = r.refused_commands.find(x.pid);
    if (c == r.refused_commands.end()) {
      jo::null(out);
    } else {
      jo::string(out, c->second);
    }
    jo::lit(out, ",\"pid\":");
    jo::unsigned_integer(out, x.pid);
    jo::lit(out, ",\"reason\":");
    jo::string(out, x.reason);
    out += '}';
  }
  jo::lit(out, "],\"targets\":[");
  for (size_t i = 0; i < r.plan.targets.size(); ++i) {
    if (i) out += ',';
    append_proc(out, r.plan.targets[i], r.gpu_memory);
  }
  jo::lit(out, "],\"zombies\":[");
  for (size_t i = 0; i < r.plan.zombies.size(); ++i) {
    if (i) out += ',';
    append_proc(out, r.plan.zombies[i], r.gpu_memory);
  }
  jo::lit(out, "]},\"signal\":");
  jo::string(out, signal_name(r.signal));
  jo::lit(out, ",\"steps\":[");
  for (size_t i = 0; i < r.steps.size(); ++i) {
    if (i) out += ',';
    append_step(out, r.steps[i]);
  }
  jo::lit(out, "],\"timeout_s\":");
  jo::number(out, r.timeout_s);
  out += '}';
  return out;
}

// A reply object (the body, or a streamed reply's last line).
static KillApiReply reply_from(const json& j) {
  if (!j.is_object()) bad_reply("not a JSON object");
  KillApiReply r;
  r.dry_run = kill_flag(j, "dry_run");
  auto sig = parse_signal(text(j, "signal", 32));
  if (!sig) bad_reply("no known 'signal'");
  r.signal = *sig;
  const json* timeout = member(j, "timeout_s");
  if (!timeout || !timeout->is_number() || timeout->get<double>() < 0 ||
      timeout->get<double>() > 3600)
    bad_reply("'timeout_s' is not 0..3600");
  r.timeout_s = timeout->get<double>();
  r.force = kill_flag(j, "force");
  const json* plan = member(j, "plan");
  if (!plan || !plan->is_object()) bad_reply("no 'plan' object");
  r.plan_id = text(*plan, "id", kMaxPlanIdBytes);
  for (const json& t : items(*plan, "targets"))
    r.plan.targets.push_back(proc_from(t, r.gpu_memory));
  for (const json& z : items(*plan, "zombies"))
    r.plan.zombies.push_back(proc_from(z, r.gpu_memory));
  for (const json& item : items(*plan, "refusals")) {
    const json& x = object(item, "refusals");
    KillRefusal refusal{pid_of(x), text(x, "reason", 1024)};
    if (member(x, "command"))
      r.refused_commands[refusal.pid] = text(x, "command");
    r.plan.refusals.push_back(std::move(refusal));
  }
  for (const json& n : items(*plan, "notes")) {
    if (!n.is_string()) bad_reply("a note is not a string");
    std::string note = n.get<std::string>();
    cut(note, 1024);
    r.plan.notes.push_back(std::move(note));
  }
  for (const json& p : items(*plan, "not_found")) {
    if (!p.is_number_unsigned() || p.get<uint64_t>() > kMaxPid)
      bad_reply("a pid in 'not_found' is not a pid");
    r.plan.not_found.push_back(p.get<uint32_t>());
  }
  for (const json& s : items(j, "steps")) r.steps.push_back(step_from(s));
  if (const json* o = member(j, "outcome")) r.outcome = outcome_from(*o);
  const json* code = member(j, "exit_code");
  if (!code || !code->is_number_unsigned() || code->get<uint64_t>() > 5)
    bad_reply("'exit_code' is not 0..5");
  r.exit_code = code->get<int>();
  r.message = text(j, "message", 1024);
  r.error = text(j, "error", 1024);
  return r;
}

KillApiReply parse_kill_api_reply(std::string_view body) {
  json j = parse_reply_json(body);
  if (j.is_discarded()) bad_reply("not a JSON object");
  return reply_from(j);
}

std::string kill_api_step_line(const KillStep& s) {
  std::string out;
  jo::lit(out, "{\"step\":");
  append_step(out, s);
  jo::lit(out, "}\n");
  return out;
}

std::string kill_api_reply_line(const KillApiReply& r) {
  return "{\"reply\":" + kill_api_reply_json(r) + "}\n";
}

KillStreamLine parse_kill_api_stream_line(std::string_view line) {
  json j = parse_reply_json(line);
  if (j.is_discarded() || !j.is_object() || j.size() != 1)
    bad_reply("a line of the streamed reply is not {\"step\"} or {\"reply\"}");
  KillStreamLine out;
  if (const json* step = member(j, "step")) {
    out.step = step_from(*step);
  } else if (const json* reply = member(j, "reply")) {
    out.reply = reply_from(*reply);
  } else {
    bad_reply("a line of the streamed reply is not {\"step\"} or {\"reply\"}");
  }
  return out;
}

}  // namespace gd::api
