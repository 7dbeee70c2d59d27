// PCI addresses as NVML writes and accepts them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fake_nvml {

struct PciAddress {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  bool operator==(const PciAddress&) const = default;
};

// "00000000:07:00.0", "0000:07:00.0" or "07:00.0" (hex, any case).
std::optional<PciAddress> parse_pci_address(std::string_view text);

std::string bus_id(const PciAddress& a);         // "00000000:07:00.0"
std::string bus_id_legacy(const PciAddress& a);  // "0000:07:00.0"

}  // namespace fake_nvml
