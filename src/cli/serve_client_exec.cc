// ps and diagnose asking serve, in the lean gpudoctor: gpudoctor-full does
// it (see serve_client.h).
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

ProcessHistory serve_memory_history(const std::string&,
                                    const std::vector<uint32_t>&,
                                    const std::string&, const std::string&) {
  return {};
}

std::optional<std::string> serve_get(const std::string&, const std::string&) {
  return std::nullopt;
}

}  // namespace gd
