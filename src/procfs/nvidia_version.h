// The version of the loaded NVIDIA kernel module, from
// /proc/driver/nvidia/version (present whenever the module is loaded, even
// when NVML cannot start). Read once at start.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gd::procfs {

// The first line names the version after "Kernel Module" (proprietary
// module) or "Open Kernel Module for <arch>" (open module):
//   NVRM version: NVIDIA UNIX x86_64 Kernel Module  384.98  Thu Oct 26 ...
//   NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01
//   Release Build  (dvs-builder@U16-A24-9-2)  Thu Oct 10 12:15:00 UTC 2024
// -> "384.98", "565.57.01"; nullopt when the text names none.
std::optional<std::string> parse_nvidia_version(std::string_view text);

// The same, read from <proc_root>/driver/nvidia/version; nullopt when the
// file is absent (module not loaded) or unreadable.
std::optional<std::string> read_nvidia_kernel_module_version(
    const std::string& proc_root);

}  // namespace gd::procfs
