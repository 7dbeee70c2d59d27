#include "pci_address.h"

#include <charconv>
#include <cstdio>

namespace fake_nvml {
namespace {

bool hex(std::string_view s, unsigned& out) {
  if (s.empty() || s.size() > 8) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

std::optional<PciAddress> parse_pci_address(std::string_view text) {
  PciAddress a;
  size_t dot = text.rfind('.');
  if (dot == std::string_view::npos || !hex(text.substr(dot + 1), a.function))
    return std::nullopt;
  std::string_view head = text.substr(0, dot);
  size_t c2 = head.rfind(':');
  if (c2 == std::string_view::npos || !hex(head.substr(c2 + 1), a.device))
    return std::nullopt;
  head = head.substr(0, c2);
  size_t c1 = head.rfind(':');
  if (c1 == std::string_view::npos) {
    if (!hex(head, a.bus)) return std::nullopt;
  } else if (!hex(head.substr(c1 + 1), a.bus) ||
             !hex(head.substr(0, c1), a.domain)) {
    return std::nullopt;
  }
  return a;
}

std::string bus_id(const PciAddress& a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08X:%02X:%02X.%X", a.domain, a.bus, a.device,
                a.function);
  return buf;
}

std::string bus_id_legacy(const PciAddress& a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04X:%02X:%02X.%X", a.domain, a.bus, a.device,
                a.function);
  return buf;
}

}  // namespace fake_nvml
