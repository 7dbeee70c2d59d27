// Processes that hold NVIDIA device files open (/dev/nvidia0, /dev/nvidiactl,
// /dev/nvidia-uvm, ...), found from /proc/*/fd links (the scan itself is
// procfs/device_fd_scan.h, which the sampler uses too). They hold GPU state
// even when NVML does not list them (another PID namespace, a process that
// only opened the device, a CUDA context NVML has not reported yet).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gd::procmgmt {

struct DeviceHolder {
  uint32_t pid = 0;
  std::vector<std::string>
      devices;  // file names, sorted: "nvidia0", "nvidia-uvm"
  // The CUDA libraries it maps (ProcessSample::libs), read for holders of
  // nvidia-uvm only: they tell a CUDA program from an NVML client. Empty:
  // none, or its maps could not be read.
  std::vector<std::string> libs;
  // True when it has /dev/nvidia<gpu_minor> open for the given minor.
  bool holds_gpu(int minor) const;
  // True when it only has control/UVM files open (no per-GPU node), so the
  // GPU it uses cannot be told from its files.
  bool gpu_unknown() const;
};

struct DeviceScan {
  std::vector<DeviceHolder> holders;  // ascending pid
  // Processes whose fd directory could not be read (another user's, without
  // root): they may hold devices too.
  std::vector<uint32_t> unreadable;
};

// `dev_prefix` is the directory of the device nodes ("/dev"); tests point it
// at a temp dir with plain files named nvidia0, nvidiactl, ...
DeviceScan scan_device_holders(const std::string& proc_root,
                               const std::string& dev_prefix = "/dev");

// The file name if `link_target` is an NVIDIA device under dev_prefix
// ("/dev/nvidia0" -> "nvidia0"), else "".
std::string nvidia_device_name(const std::string& link_target,
                               const std::string& dev_prefix);

}  // namespace gd::procmgmt
