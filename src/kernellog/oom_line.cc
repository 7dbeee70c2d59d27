#include "kernellog/oom_line.h"

#include <charconv>

namespace gd::kernellog {

std::optional<OomLine> parse_oom_kill(std::string_view msg) {
  constexpr std::string_view kMarker = "Killed process ";
  size_t at = msg.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = msg.substr(at + kMarker.size());
  uint32_t pid = 0;
  auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
  if (ec != std::errc() || p == rest.data() || pid == 0) return std::nullopt;
  // The pid is followed by " (comm)"; anything else is not the kernel's line.
  std::string_view after(p, static_cast<size_t>(rest.data() + rest.size() - p));
  if (!after.starts_with(" (")) return std::nullopt;
  return OomLine{pid};
}

}  // namespace gd::kernellog
