// ps and diagnose asking serve, in the lean gpudoctor: gpudoctor-full does
// it (see serve_client.h).
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/full_binary.h"
#include "cli/serve_client.h"

namespace gd {

void ask_serve_in_full_binary(std::string_view what) {
  const std::string why = try_exec_full_binary();
  std::fprintf(stderr,
               "gpudoctor: warning: %.*s runs in %s; going on without it\n",
               static_cast<int>(what.size()), what.data(), why.c_str());
}

void check_serve_url(const char* flag, const std::string& url) {
  if (url.empty() || url == "none") return;  // "" too: do not ask
  const size_t scheme = url.rfind("http://", 0) == 0    ? 7
                        : url.rfind("https://", 0) == 0 ? 8
                                                        : 0;
  if (scheme == 0 || url.size() == scheme || url[scheme] == '/' ||
      url[scheme] == ':')
    throw CLI::ValidationError(
        flag, "'" + url.substr(0, 200) +
                  "' is not http[s]://host[:port] (or none: do not ask serve)");
}

ProcessHistory serve_memory_history(const std::string&,
                                    const std::vector<uint32_t>&,
                                    const std::string&, const std::string&) {
  return {};
}

std::optional<std::string> serve_get(const std::string&, const std::string&) {
  return std::nullopt;
}

}  // namespace gd
