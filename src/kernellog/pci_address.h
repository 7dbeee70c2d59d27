// PCI address normalisation shared by PciIndex and its tests.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gd::kernellog {

// "00000000:07:00.0", "0000:07:00.0", "0000:07:00", "07:00.0", "PCI:0000:07:00"
// (any case) -> "0000:07:00" (domain:bus:device, lower-case hex, 4-digit
// domain or wider). nullopt when it is not a PCI address.
std::optional<std::string> normalize_pci_address(std::string_view address);

}  // namespace gd::kernellog
