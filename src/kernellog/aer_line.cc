#include "kernellog/aer_line.h"

#include <charconv>
#include <cstdio>

#include "common/ascii_text.h"
#include "common/pci_bus_id.h"
#include "kernellog/pci_address.h"

namespace gd::kernellog {

namespace {

// Old kernels say "Corrected"/"Uncorrected", 6.x "Correctable"/
// "Uncorrectable"; the fatal/non-fatal part is the same.
std::string severity_of(std::string_view phrase) {
  if (phrase.find("Uncorrect") != std::string_view::npos) {
    if (phrase.find("Non-Fatal") != std::string_view::npos)
      return "uncorrected_non_fatal";
    if (phrase.find("Fatal") != std::string_view::npos) return "fatal";
    return "";
  }
  if (phrase.find("Correct") != std::string_view::npos) return "corrected";
  return "";
}

// "id=0010" (bus 0x00, device 0x02, function 0) on the port's domain.
std::string source_from_id(std::string_view id, std::string_view port) {
  unsigned v = 0;
  auto [p, ec] = std::from_chars(id.data(), id.data() + id.size(), v, 16);
  if (ec != std::errc() || p == id.data() || v > 0xffff) return "";
  std::string_view domain = port.substr(0, port.find(':'));
  char out[48];
  std::snprintf(out, sizeof out, "%.*s:%02x:%02x.%x",
                static_cast<int>(domain.size()), domain.data(), v >> 8,
                (v >> 3) & 0x1f, v & 7);
  return out;
}

bool is_detail(std::string_view rest) {
  if (rest.starts_with("device [") &&
      rest.find("error status/mask=") != std::string_view::npos)
    return true;
  // "[ 0] RxErr", "[12] Timeout", "[5 ] SDES" (bit number, then name).
  if (rest.size() > 4 && rest[0] == '[' && rest.find(']') <= 4) return true;
  return rest.starts_with("TLP Header:") ||
         rest.starts_with("Error of this Agent");
}

}  // namespace

std::optional<AerLine> parse_aer(std::string_view msg) {
  // "<driver> <address>: ..." — the driver is one word.
  size_t space = msg.find(' ');
  if (space == std::string_view::npos || space == 0 || space > 48)
    return std::nullopt;
  std::string_view rest = msg.substr(space + 1);
  size_t colon = rest.find(": ");
  if (colon == std::string_view::npos || colon > 20) return std::nullopt;
  std::string_view address = rest.substr(0, colon);
  if (address.find(' ') != std::string_view::npos) return std::nullopt;
  auto device = canonical_pci_bus_id(address);
  if (!device || address.size() < 12) return std::nullopt;  // full address
  rest = trim_left(rest.substr(colon + 2));
  if (rest.starts_with("AER: ")) rest = trim_left(rest.substr(5));

  AerLine line;
  line.driver = std::string(msg.substr(0, space));
  line.device = *device;
  if (rest.starts_with("PCIe Bus Error: severity=")) {
    std::string_view sev = rest.substr(25);
    line.kind = AerLineKind::kBusError;
    line.severity = severity_of(sev.substr(0, sev.find(',')));
    if (line.severity.empty()) return std::nullopt;
    return line;
  }
  for (std::string_view marker :
       {std::string_view(" error received: "),
        std::string_view(" error message received from ")}) {
    size_t at = rest.find(marker);
    if (at == std::string_view::npos || at > 40) continue;
    line.kind = AerLineKind::kReceived;
    line.severity = severity_of(rest.substr(0, at));
    if (line.severity.empty()) return std::nullopt;
    std::string_view src = trim_left(rest.substr(at + marker.size()));
    src = src.substr(0, src.find(' '));
    if (src.starts_with("id="))
      line.source = source_from_id(src.substr(3), line.device);
    else if (auto a = canonical_pci_bus_id(src))
      line.source = *a;
    return line;
  }
  if (is_detail(rest)) {
    line.kind = AerLineKind::kDetail;
    return line;
  }
  return std::nullopt;
}

}  // namespace gd::kernellog
