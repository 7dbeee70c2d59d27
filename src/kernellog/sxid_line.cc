#include "kernellog/sxid_line.h"

#include <charconv>

#include "common/pci_bus_id.h"
#include "kernellog/pci_address.h"

namespace gd::kernellog {

std::optional<SxidLine> parse_sxid(std::string_view msg) {
  constexpr std::string_view kMarker = "SXid (";
  size_t at = msg.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = msg.substr(at + kMarker.size());
  size_t close = rest.find(')');
  if (close == std::string_view::npos || close > 32) return std::nullopt;
  SxidLine s;
  if (auto pci = canonical_pci_bus_id(rest.substr(0, close))) s.pci = *pci;
  rest.remove_prefix(close + 1);
  if (!rest.starts_with(":")) return std::nullopt;
  rest.remove_prefix(1);
  while (rest.starts_with(" ")) rest.remove_prefix(1);
  auto [p, ec] =
      std::from_chars(rest.data(), rest.data() + rest.size(), s.code);
  if (ec != std::errc() || p == rest.data() || s.code < 0) return std::nullopt;
  rest.remove_prefix(static_cast<size_t>(p - rest.data()));
  if (rest.starts_with(", ")) rest.remove_prefix(2);
  s.detail = rest.starts_with("Severity ") || rest.starts_with("Data {");
  return s;
}

}  // namespace gd::kernellog
