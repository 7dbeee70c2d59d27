// libFuzzer harness for what serve's HTTP side parses itself: the Host
// header (host_check.h), --allowed-host values, the Authorization header
// (basic_auth.h), the --web-config file (web_config.h; any error must be
// std::invalid_argument, which serve reports as one line), and POST
// /api/v1/kill's head checks and JSON body (kill_api.h,
// api/kill_json.h). The request line and the other headers are
// libmicrohttpd's. Checks that a name accepted from a header is lower case,
// that a loopback listener passes loopback names only, that an
// --allowed-host value, once accepted, is answered when it comes back as a
// Host header, that a kill head passes only with a JSON type, the header
// set to 1 and a length within the bound, and that a kill body passes only
// within its bounds and reads back the same once written.
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "api/kill_json.h"
#include "fuzz_check.h"
#include "serve/basic_auth.h"
#include "serve/host_check.h"
#include "serve/http_limits.h"
#include "serve/kill_api.h"
#include "serve/web_config.h"

namespace {

// The head checks on the input's first three lines as Content-Type,
// X-Gpudoctor-Kill and Content-Length.
void check_kill_head(std::string_view input) {
  std::string_view part[3];
  for (auto& p : part) {
    const size_t nl = input.find('\n');
    p = input.substr(0, nl);
    input = nl == std::string_view::npos ? "" : input.substr(nl + 1);
  }
  gd::KillHead head{"POST", part[0], part[1], part[2], false};
  if (gd::kill_head_refusal(head, true)) return;
  FUZZ_CHECK(!part[2].empty() && part[2].size() <= 12, part[2]);
  size_t n = 0;
  for (char c : part[2]) {
    FUZZ_CHECK(c >= '0' && c <= '9', part[2]);
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  FUZZ_CHECK(n <= gd::http_limits::kMaxKillBodyBytes, part[2]);
  FUZZ_CHECK(part[1].find('1') != std::string_view::npos, part[1]);
  FUZZ_CHECK(gd::kill_head_refusal(head, false).has_value(),
             "accepted while off");
}

// A body accepted is within the bounds handle() relies on, and what is
// written of it reads back as the same request.
void check_kill_body(std::string_view input) {
  gd::api::KillApiRequest r;
  try {
    r = gd::api::parse_kill_api_request(input);
  } catch (const std::invalid_argument&) {
    return;
  }
  FUZZ_CHECK(!r.request.pids.empty() || !r.request.gpus.empty(), input);
  FUZZ_CHECK(r.request.gpus.size() <= 1024, input);
  FUZZ_CHECK(r.request.pids.size() <= gd::api::kKillApiMaxPids, input);
  for (uint32_t pid : r.request.pids)
    FUZZ_CHECK(pid >= 1 && pid <= 4194304, input);
  for (int gpu : r.request.gpus) FUZZ_CHECK(gpu >= 0 && gpu <= 1023, input);
  FUZZ_CHECK(r.signal == SIGTERM || r.signal == SIGKILL, input);
  FUZZ_CHECK(r.timeout_s >= 0 && r.timeout_s <= gd::api::kKillApiMaxTimeoutS,
             input);
  FUZZ_CHECK(r.request.user.size() <= 64 && r.plan_id.size() <= 64, input);
  const std::string again = gd::api::kill_api_request_json(r);
  gd::api::KillApiRequest back;
  try {
    back = gd::api::parse_kill_api_request(again);
  } catch (const std::invalid_argument&) {
    FUZZ_CHECK(false, again);
  }
  FUZZ_CHECK(back.request.pids == r.request.pids &&
                 back.request.gpus == r.request.gpus &&
                 back.request.user == r.request.user &&
                 back.request.tree == r.request.tree &&
                 back.request.any == r.request.any && back.signal == r.signal &&
                 back.force == r.force && back.dry_run == r.dry_run &&
                 back.plan_id == r.plan_id && back.timeout_s == r.timeout_s,
             again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto name = gd::host_header_name(input);
  if (name) {
    for (char c : *name)
      if (c >= 'A' && c <= 'Z') std::abort();
  }
  for (const char* listen : {"127.0.0.1", "::1"}) {
    const gd::HostPolicy policy = gd::host_policy_for(listen, {});
    if (gd::host_allowed(policy, input) &&
        !(name && gd::is_loopback_name(*name)))
      std::abort();
  }
  try {
    const gd::HostPolicy policy =
        gd::host_policy_for("127.0.0.1", {std::string(input)});
    if (!policy.any && !policy.names.empty()) {
      const std::string& n = policy.names.front();
      const bool v6 = n.find(':') != std::string::npos;
      const std::string header = (v6 ? "[" + n + "]" : n) + ":9856";
      if (!gd::host_allowed(policy, std::string_view(header))) std::abort();
    }
  } catch (const std::invalid_argument&) {
  }
  if (auto creds = gd::parse_basic_auth(input)) {
    if (creds->first.find(':') != std::string::npos) std::abort();
  }
  try {
    gd::parse_web_config(std::string(input), "/nonexistent");
  } catch (const std::invalid_argument&) {
  }
  check_kill_head(input);
  check_kill_body(input);
  return 0;
}
