// The one walk over the pid directories of /proc: every reader that needs
// "all processes" (the process table, device-fd scans, the other-CPU scan,
// procmgmt's snapshots) lists them here, so a pid entry is recognised one
// way ("1234", no sign, no leading zero, within uint32) everywhere.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gd::procfs {

// Calls fn(pid) for each pid directory under `proc_root`, in directory
// order. False when `proc_root` cannot be opened (then fn is never called).
bool for_each_pid(const std::string& proc_root,
                  const std::function<void(uint32_t)>& fn);

// The pids under `proc_root`, ascending; empty when it cannot be opened.
std::vector<uint32_t> list_pids(const std::string& proc_root);

}  // namespace gd::procfs
