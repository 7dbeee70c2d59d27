// ps and diagnose asking serve, in gpudoctor-full (see serve_client.h).
#include "cli/serve_client.h"

#include <CLI/CLI.hpp>

#include "http_client/url.h"
#include "monitor/serve_history.h"

namespace gd {

void ask_serve_in_full_binary(std::string_view) {}

void check_serve_url(const char* flag, const std::string& url) {
  if (url.empty() || url == "none") return;  // "" too: do not ask
  try {
    http::parse_url(url);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError(
        flag, std::string(e.what()) + " (or none: do not ask serve)");
  }
}

ProcessHistory serve_memory_history(const std::string& base_url,
                                    const std::vector<uint32_t>& pids,
                                    const std::string& since,
                                    const std::string& step) {
  return monitor::fetch_process_memory_history(base_url, pids, since, step);
}

std::optional<std::string> serve_get(const std::string& base_url,
                                     const std::string& path) {
  return monitor::fetch_from_serve(base_url, path);
}

}  // namespace gd
