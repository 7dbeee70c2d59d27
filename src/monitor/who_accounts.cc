#include "monitor/who_accounts.h"

#include <unistd.h>

#include "procmgmt/device_holders.h"

namespace gd::monitor {

using namespace procmgmt;

ProcSnapshot snapshot_from_sample(const Sample& s) {
  std::vector<ProcEntry> entries;
  entries.reserve(s.processes.size());
  for (const auto& p : s.processes) {
    if (p.state == "missing") continue;
    ProcEntry e;
    e.pid = p.pid;
    e.ppid = p.ppid.value_or(0);
    e.state = p.state.empty() ? '?' : p.state[0];
    e.user = p.user;
    e.comm = p.name;
    e.cmdline = p.cmdline;
    e.cgroup = p.cgroup;
    if (p.ns_pid && *p.ns_pid != p.pid) e.nspid = {p.pid, *p.ns_pid};
    // A trace's start times are Unix seconds: ticks from the epoch.
    static const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    if (p.start_time && *p.start_time > 0)
      e.starttime = static_cast<uint64_t>(*p.start_time * ticks);
    entries.push_back(std::move(e));
  }
  return ProcSnapshot::from_entries(std::move(entries), 0.0);
}

namespace {

std::vector<std::string> libs_of(const Sample& s, uint32_t pid) {
  for (const auto& p : s.processes)
    if (p.pid == pid) return p.libs;
  return {};
}

}  // namespace

GpuMemoryAccount who_account(const TraceHeader& header, const Sample& sample,
                             int gpu, bool live, const std::string& proc_root,
                             const std::string& dev_prefix) {
  if (live)
    return account_gpu_memory(header, sample, gpu,
                              ProcSnapshot::read(proc_root),
                              scan_device_holders(proc_root, dev_prefix));
  DeviceScan devices;
  if (sample.device_holders)
    for (const auto& h : *sample.device_holders)
      devices.holders.push_back({h.pid, h.devices, libs_of(sample, h.pid)});
  return account_gpu_memory(header, sample, gpu, snapshot_from_sample(sample),
                            devices);
}

}  // namespace gd::monitor
