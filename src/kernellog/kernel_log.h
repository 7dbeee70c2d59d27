// Kernel log: NVIDIA Xid lines and OOM-killer lines -> trace events.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/sample.h"

namespace gd {

// Maps PCI addresses as the kernel prints them ("0000:07:00", "07:00.0",
// "0000:07:00.0") to GPU indices, from the header's gpus[].pci_bus_id.
class PciIndex {
 public:
  PciIndex() = default;
  explicit PciIndex(const std::vector<GpuInfo>& gpus);
  void add(std::string_view pci_bus_id, int gpu_index);
  std::optional<int> find(std::string_view kernel_pci) const;

 private:
  std::map<std::string, int> by_domain_bus_dev_;  // normalised "DDDD:BB:DD"
};

// One kernel-log line (dmesg, journalctl -k, or raw /dev/kmsg record) ->
// an `xid` or `oom_kill` event; nullopt for anything else.
std::optional<Event> parse_kernel_log_line(std::string_view line,
                                           const PciIndex& pci);

// Follows /dev/kmsg (or a plain file, for tests and replays) without blocking.
class KernelLogSource {
 public:
  // from_start=false: only lines that arrive after construction.
  explicit KernelLogSource(std::string path = "/dev/kmsg",
                           bool from_start = false);
  ~KernelLogSource();
  bool ok() const;                   // false if the log could not be opened
  const std::string& error() const;  // why not
  std::vector<Event> poll(const PciIndex& pci);  // new events since last poll

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gd
