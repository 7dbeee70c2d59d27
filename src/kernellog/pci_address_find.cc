// find_pci_address (pci_address.h).
#include <cctype>
#include <cstdio>

#include "common/pci_bus_id.h"
#include "kernellog/pci_address.h"

namespace gd::kernellog {

namespace {

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)); }
bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)); }

size_t hex_run(std::string_view s, size_t at) {
  size_t n = 0;
  while (at + n < s.size() && is_hex(s[at + n])) ++n;
  return n;
}

// "DDDD:BB:DD[.F]" at `at` (4 to 8 domain digits); its length, or 0.
size_t match_address(std::string_view s, size_t at) {
  size_t domain = hex_run(s, at);
  if (domain < 4 || domain > 8) return 0;
  size_t i = at + domain;
  for (int part = 0; part < 2; ++part) {
    if (i >= s.size() || s[i] != ':' || hex_run(s, i + 1) != 2) return 0;
    i += 3;
  }
  if (i + 1 < s.size() && s[i] == '.' && s[i + 1] >= '0' && s[i + 1] <= '7')
    i += 2;
  if (i < s.size() && is_alnum(s[i])) return 0;
  return i - at;
}

}  // namespace

std::optional<std::string> find_pci_address(std::string_view text) {
  for (size_t at = 0; at < text.size(); ++at) {
    if (at > 0 && is_alnum(text[at - 1])) continue;
    if (size_t len = match_address(text, at))
      return canonical_pci_bus_id(text.substr(at, len));
  }
  return std::nullopt;
}

}  // namespace gd::kernellog
