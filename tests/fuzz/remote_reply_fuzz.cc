// What `top --connect` reads from the network (monitor/remote_json.h,
// procmgmt/kill_json.h): a reply of serve's /api/v1/status,
// /api/v1/findings or POST /api/v1/kill, or the URL the user typed. The
// first byte picks which. Rejected with a std::runtime_error (an
// invalid_argument for a URL), or accepted within the bounds the screen
// relies on: known severities, GPU indices 0..1023, bounded counts and
// texts, a sane interval, an exit code of `kill`; a kill reply accepted
// reads back the same once written; so does a line of a streamed kill
// reply.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "monitor/remote_feed.h"
#include "monitor/remote_json.h"
#include "procmgmt/kill_json.h"

namespace {

void check_kill_reply(std::string_view text) {
  using namespace gd::procmgmt;
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
  using namespace gd::procmgmt;
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1,
                              size - 1);
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
        FUZZ_CHECK(u.prefix.empty() || u.prefix.front() == '/', text);
        FUZZ_CHECK(u.prefix.empty() || u.prefix.back() != '/', text);
      } catch (const std::invalid_argument&) {
      }
  }
  return 0;
}
