// PCI bus ids as different libraries print them, compared as one: NVML
// writes "00000000:07:00.0", the CUDA driver "0000:07:00.0" (upper-case
// hex), sysfs "0000:07:00.0". A tool that ties a CUDA device to its NVML GPU
// must do so by bus id: the two number GPUs differently (CUDA puts the
// fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID, and honours
// CUDA_VISIBLE_DEVICES).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gd {

// "00000000:07:00.0", "0000:07:00.0", "07:00.0" (domain 0), the kernel's
// "PCI:0000:07:00" -> "0000:07:00.0": the domain as 4 hex digits (wider when
// it needs more), lower case, the function kept (".0" when none is printed);
// spaces around it are ignored. nullopt when it is not a PCI address. The
// one normalisation of the project: NVML, CUDA, sysfs, the kernel log and
// the rules compare addresses in this form.
std::optional<std::string> canonical_pci_bus_id(std::string_view text);

// The same without the function, "0000:07:00": Xid lines do not print it,
// and a GPU is function 0 of its device.
std::optional<std::string> canonical_pci_device(std::string_view text);

}  // namespace gd
