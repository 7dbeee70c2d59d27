#include "common/pci_bus_id.h"

#include <charconv>
#include <cstdio>
#include <vector>

namespace gd {

namespace {

bool hex_field(std::string_view text, size_t max_digits, unsigned* out) {
  if (text.empty() || text.size() > max_digits) return false;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), *out, 16);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::optional<std::string> canonical_pci_bus_id(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.size() >= 4 &&
      (text.substr(0, 4) == "PCI:" || text.substr(0, 4) == "pci:"))
    text.remove_prefix(4);
  unsigned function = 0;
  if (size_t dot = text.rfind('.'); dot != std::string_view::npos) {
    if (!hex_field(text.substr(dot + 1), 1, &function) || function > 7)
      return std::nullopt;
    text = text.substr(0, dot);
  }
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  unsigned domain = 0, bus = 0, device = 0;
  if (parts.size() == 3) {
    if (!hex_field(parts[0], 8, &domain)) return std::nullopt;
    parts.erase(parts.begin());
  }
  if (parts.size() != 2 || !hex_field(parts[0], 2, &bus) ||
      !hex_field(parts[1], 2, &device) || device > 0x1f)
    return std::nullopt;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, device,
                function);
  return std::string(buf);
}

std::optional<std::string> canonical_pci_device(std::string_view text) {
  auto full = canonical_pci_bus_id(text);
  if (full) full->resize(full->size() - 2);  // drop ".F"
  return full;
}

}  // namespace gd
