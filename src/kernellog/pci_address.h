// PCI addresses inside kernel-log text (normalised by common/pci_bus_id.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gd::kernellog {

// The first full PCI address ("0000:b3:00.0", "PCI:0000:02:00") anywhere in
// `text`, normalised with its function; nullopt when there is none. Needs
// the domain: "12:34:56" in a message is a time, not an address.
std::optional<std::string> find_pci_address(std::string_view text);

}  // namespace gd::kernellog
