// NVSwitch SXid lines (nvidia-nvswitch driver, HGX/DGX fabric):
//   nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 12028, Non-fatal, Link 62
//   egress non-posted PRIV error (First)
//   nvidia-nvswitch1: SXid (PCI:0000:02:00.0): 22013, Severity 0 Engine
//   instance 00 Sub-engine instance 00
//   nvidia-nvswitch1: SXid (PCI:0000:02:00.0): 22013, Data {0x00000000, ...}
// One error prints its description line, then "Severity ..." and "Data {...}"
// lines with the same switch and code: those are details of the same error.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gd::kernellog {

struct SxidLine {
  std::string pci;  // the switch, normalised "0000:07:00.0"; "" unknown
  int code = 0;
  bool detail = false;  // a "Severity ..." or "Data {...}" line
};

std::optional<SxidLine> parse_sxid(std::string_view message);

}  // namespace gd::kernellog
