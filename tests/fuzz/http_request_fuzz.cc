// libFuzzer harness for what serve's HTTP side parses itself: the Host
// header (host_check.h), --allowed-host values, the Authorization header
// (basic_auth.h) and the --web-config file (web_config.h; any error must be
// std::invalid_argument, which serve reports as one line). The request line and
// the other headers are libmicrohttpd's. Checks that a name accepted from a
// header is lower case, that a loopback listener passes loopback names only,
// and that an --allowed-host value, once accepted, is answered when it comes
// back as a Host header.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "serve/basic_auth.h"
#include "serve/host_check.h"
#include "serve/web_config.h"

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
  return 0;
}
