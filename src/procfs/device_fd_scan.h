// Processes that hold NVIDIA device files open (/dev/nvidia0, /dev/nvidiactl,
// /dev/nvidia-uvm, ...), found from <proc>/<pid>/fd links. The scan walks
// every fd of every process, so callers run it on demand (`who`, `kill`) or
// rarely (the sampler, only when GPU memory is unaccounted for).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/sample.h"

namespace gd::procfs {

struct DeviceFdScan {
  // Ascending pid; each holder's device names sorted and unique. The
  // calling process itself is left out (the NVML library it loaded holds
  // the devices too).
  std::vector<DeviceHolder> holders;
  // Processes whose fd directory could not be read (another user's,
  // without root): they may hold devices too.
  std::vector<uint32_t> unreadable;
};

// `dev_prefix` is the directory of the device nodes ("/dev"); tests point it
// at a temp dir with plain files named nvidia0, nvidiactl, ...
DeviceFdScan scan_nvidia_device_fds(const std::string& proc_root,
                                    const std::string& dev_prefix = "/dev");

// The file name if `link_target` is an NVIDIA device under dev_prefix
// ("/dev/nvidia0" -> "nvidia0"), else "".
std::string nvidia_device_name(const std::string& link_target,
                               const std::string& dev_prefix);

}  // namespace gd::procfs
