// NVIDIA GPUs on the PCI bus (/sys/bus/pci/devices), whether or not NVML
// enumerates them, for the header's pci_gpus. Read once at start.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/sample.h"

namespace gd::procfs {

struct PciGpuDevice {
  PciGpu gpu;  // address and bound driver
  // The bridge (root or downstream port) whose secondary bus holds the GPU,
  // "0000:00:03.1"; "" when the GPU hangs off a root bus directly. AER
  // lines for the GPU's link are printed by that port.
  std::string upstream_port;
};

// Devices of vendor 0x10de with a display class (0x03xxxx: VGA 0x0300,
// 3D 0x0302, other display 0x0380): not the GPUs' audio (0x0403) or USB
// functions, nor NVSwitches (0x0680). In address order; nullopt when the
// directory cannot be read (not looked, rather than "none").
// `sys_root` is "/sys" or a fixture tree.
std::optional<std::vector<PciGpuDevice>> scan_pci_gpus(
    const std::string& sys_root);

}  // namespace gd::procfs
