// PCI addresses as the rules compare them: NVML writes "00000000:07:00.0",
// sysfs and the kernel log "0000:07:00.0" (upper or lower case). Header-only
// so that the rules/*.cc glob stays the only build input.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>

namespace gd {

// "00000000:07:00.0" and "0000:07:00.0" -> the same "0000:07:00.0": the
// domain as a number (4 hex digits, as lspci writes it), the rest lower
// case. nullopt when it does not look like an address.
inline std::optional<std::string> pci_key(std::string_view address) {
  size_t colon = address.find(':');
  if (colon == std::string_view::npos || address.size() - colon < 8)
    return std::nullopt;
  std::string_view domain = address.substr(0, colon);
  unsigned value = 0;
  auto [end, ec] =
      std::from_chars(domain.data(), domain.data() + domain.size(), value, 16);
  if (ec != std::errc() || end != domain.data() + domain.size())
    return std::nullopt;
  std::string rest(address.substr(colon + 1));
  std::transform(rest.begin(), rest.end(), rest.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return fmt::format("{:04x}:{}", value, rest);
}

}  // namespace gd
