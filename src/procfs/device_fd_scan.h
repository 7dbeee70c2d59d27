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
// The same for the processes `pids` only (ascending or not): a re-check
// of known holders that costs their fds, not every process's.
DeviceFdScan scan_nvidia_device_fds_of(const std::string& proc_root,
                                       const std::string& dev_prefix,
                                       const std::vector<uint32_t>& pids);

// A process holds at most this many distinct device names in a scan's
// result (nvidia0..N of a 16-GPU host, nvidiactl, nvidia-uvm, caps, ...);
// the rest are left out.
inline constexpr size_t kMaxDevicesPerHolder = 32;

// True when `pid` under `proc_root` is gone or a zombie (its stat says Z
// or X, or cannot be read).
bool process_dead(const std::string& proc_root, uint32_t pid);

// The file name if `link_target` is an NVIDIA device under dev_prefix
// ("/dev/nvidia0" -> "nvidia0"), else "".
std::string nvidia_device_name(const std::string& link_target,
                               const std::string& dev_prefix);

}  // namespace gd::procfs
