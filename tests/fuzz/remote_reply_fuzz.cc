// What `top --connect` reads from the network (monitor/remote_json.h,
// api/kill_json.h): a reply of serve's /api/v1/status,
// /api/v1/findings or POST /api/v1/kill, or the URL the user typed. The
// first byte picks which. Rejected with a std::runtime_error (an
// invalid_argument for a URL), or accepted within the bounds the screen
// relies on: known severities, GPU indices 0..1023, bounded counts and
// texts, a sane interval, an exit code of `kill`; a kill reply accepted
// reads back the same once written; so does a line of a streamed kill
// reply.
//
// With the first byte's high bit set, the input is a recipe for a large
// document, so that nesting 100,000 deep and arrays of a million items are
// reached from a few bytes: the second byte times 400 is a count N, and the
// rest is A \x01 B \x01 C \x01 D, giving A*N + B + C*N + D, at most 2 MiB
// (e.g. '{"header":' N times, '1', '}' N times; or '{"findings":[0', ',0'
// N times, ']}'). Such a reply must be refused (nested deeper than 64
// levels) or accepted within the bounds, never crash.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "api/kill_json.h"
#include "fuzz_check.h"
#include "monitor/remote_feed.h"
#include "monitor/remote_json.h"

namespace {

void check_kill_reply(std::string_view text) {
  using namespace gd::api;
  KillApiReply r;
  try {
    r = parse_kill_api_reply(text);
  } catch (const std::runtime_error&) {
    return;
  }
  FUZZ_CHECK(r.exit_code >= 0 && r.exit_code <= 5, text);
  FUZZ_CHECK(r.timeout_s >= 0 && r.timeout_s <= 3600, text);
  FUZZ_CHECK(r.message.size() <= 1024 && r.error.size() <= 1024, text);
  FUZZ_CHECK(r.plan_id.size() <= 64, text);
  for (const auto* list : {&r.plan.targets, &r.plan.zombies})
    for (const auto& t : *list) {
      FUZZ_CHECK(t.proc.cmdline.size() <= 16 * 1024, text);
      for (int g : t.gpus) FUZZ_CHECK(g >= 0 && g <= 1023, text);
    }
  for (const auto& n : r.plan.notes) FUZZ_CHECK(n.size() <= 1024, text);
  const std::string again = kill_api_reply_json(r);
  KillApiReply back;
  try {
    back = parse_kill_api_reply(again);
  } catch (const std::runtime_error&) {
    FUZZ_CHECK(false, again);
  }
  FUZZ_CHECK(kill_api_reply_json(back) == again, again);
}

// A line of a streamed kill reply: a step, or the reply (bounded as
// above, and read back the same once written).
void check_kill_stream_line(std::string_view text) {
  using namespace gd::api;
  KillStreamLine line;
  try {
    line = parse_kill_api_stream_line(text);
  } catch (const std::runtime_error&) {
    return;
  }
  FUZZ_CHECK(line.step.has_value() != line.reply.has_value(), text);
  if (line.step) {
    FUZZ_CHECK(line.step->error.size() <= 1024, text);
    const std::string again = kill_api_step_line(*line.step);
    FUZZ_CHECK(again.find('\n') == again.size() - 1, again);
  }
  if (line.reply) {
    const std::string again = kill_api_reply_line(*line.reply);
    FUZZ_CHECK(again.find('\n') == again.size() - 1, again);
    check_kill_reply(kill_api_reply_json(*line.reply));
  }
}

// The next part of a recipe, up to \x01 (or the end).
std::string_view part(std::string_view& recipe) {
  const size_t end = std::min(recipe.find('\x01'), recipe.size());
  std::string_view p = recipe.substr(0, end);
  recipe.remove_prefix(std::min(end + 1, recipe.size()));
  return p;
}

// A*N + B + C*N + D from the recipe "N A \x01 B \x01 C \x01 D".
std::string expand(std::string_view recipe) {
  constexpr size_t kMaxBytes = 2 << 20;
  if (recipe.empty()) return "";
  size_t n = static_cast<uint8_t>(recipe[0]) * size_t{400};
  recipe.remove_prefix(1);
  const std::string_view a = part(recipe), b = part(recipe), c = part(recipe),
                         d = recipe;
  if (!a.empty() || !c.empty())
    n = std::min(n, kMaxBytes / (a.size() + c.size()));
  std::string out;
  out.reserve(n * (a.size() + c.size()) + b.size() + d.size());
  for (size_t i = 0; i < n; ++i) out += a;
  out += b;
  for (size_t i = 0; i < n; ++i) out += c;
  out += d;
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string expanded;
  if (data[0] & 0x80) {
    expanded = expand(text);
    text = expanded;
  }
  switch (data[0] % 4) {
    case 3:
      check_kill_reply(text);
      check_kill_stream_line(text);
      break;
    case 0:
      try {
        auto st = gd::monitor::parse_remote_status(text);
        FUZZ_CHECK(st.interval_s > 0 && st.interval_s < 3600, text);
        FUZZ_CHECK(st.version.size() <= 64, st.version);
      } catch (const std::runtime_error&) {
      }
      break;
    case 1:
      try {
        auto fs = gd::monitor::parse_remote_findings(text);
        FUZZ_CHECK(fs.findings.size() <= 1000, text);
        for (const auto& f : fs.findings) {
          FUZZ_CHECK(f.severity == "critical" || f.severity == "warning" ||
                         f.severity == "info",
                     f.severity);
          FUZZ_CHECK(f.gpus.size() <= 1024 && f.pids.size() <= 4096, f.id);
          for (int g : f.gpus) FUZZ_CHECK(g >= 0 && g < 1024, f.id);
          FUZZ_CHECK(f.title.size() <= 64 * 1024, f.id);
        }
      } catch (const std::runtime_error&) {
      }
      break;
    default:
      try {
        auto u = gd::monitor::parse_remote_url(std::string(text));
        FUZZ_CHECK(u.scheme_host_port.rfind("http", 0) == 0, text);
        FUZZ_CHECK(u.scheme_host_port.find('@') == std::string::npos, text);
        FUZZ_CHECK(u.path.empty() || u.path.front() == '/', text);
        FUZZ_CHECK(u.path.empty() || u.path.back() != '/', text);
        FUZZ_CHECK(u.port >= 1 && u.port <= 65535, text);
      } catch (const std::invalid_argument&) {
      }
  }
  return 0;
}
