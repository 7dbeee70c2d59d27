// NVIDIA Xid lines, as the driver (NVRM) prints them:
//   NVRM: Xid (PCI:0000:07:00): 79, pid=1234, name=python, GPU has fallen off
//   the bus. NVRM: Xid (PCI:0000:0a:00): 45, pid='<unknown>', name=<unknown>,
//   Ch 00000008 NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000000 intr
//   00004000   (old) NVRM: Xid (0000:03:00): 14, Channel 00000001 (old)
// Not Xid: "SXid (...)" from the NVSwitch driver, "GPU has fallen off the
// bus" without the Xid marker, "caused by previous Xid 149" (no "(").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gd::kernellog {

struct XidLine {
  std::string_view pci;  // as printed inside the parentheses, no "PCI:"
  int code = 0;
  std::optional<uint32_t> pid;  // nullopt for pid='<unknown>' or no pid field
};

std::optional<XidLine> parse_xid(std::string_view message);

}  // namespace gd::kernellog
