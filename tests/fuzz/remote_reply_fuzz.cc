// What `top --connect` reads from the network (monitor/remote_json.h): a
// reply of serve's /api/v1/status or /api/v1/findings, or the URL the user
// typed. The first byte picks which. Rejected with a std::runtime_error (an
// invalid_argument for a URL), or accepted within the bounds the screen
// relies on: known severities, GPU indices 0..1023, bounded counts, a
// sane interval.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "monitor/remote_feed.h"
#include "monitor/remote_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1,
                              size - 1);
  switch (data[0] % 3) {
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
