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

// The same with the function kept: "0000:00:03.1" (".0" when none printed).
// Bridges differ by function (00:03.0 and 00:03.1 are two ports).
std::optional<std::string> normalize_pci_function_address(
    std::string_view address);

// The first full PCI address ("0000:b3:00.0", "PCI:0000:02:00") anywhere in
// `text`, normalised with its function; nullopt when there is none. Needs
// the domain: "12:34:56" in a message is a time, not an address.
std::optional<std::string> find_pci_address(std::string_view text);

}  // namespace gd::kernellog
