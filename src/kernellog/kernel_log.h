// Kernel log: NVIDIA Xid and other NVRM lines, NVSwitch SXid lines, PCIe AER
// lines and OOM-killer lines -> trace events.
#pragma once

#include <cstdint>
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

  // An NVIDIA GPU the PCI bus lists (the header's pci_gpus), whether or not
  // NVML enumerates it: AER lines about it are kept.
  void add_pci_gpu(std::string_view address);
  // The bridge (root or downstream port) whose secondary bus holds the GPU
  // at gpu_address: AER lines of that port are about the GPU's link.
  void add_port(std::string_view port_address, std::string_view gpu_address);
  // The GPU ("0000:07:00.0") that `address` is, or that sits right below
  // the port at `address`; nullopt for any other device.
  std::optional<std::string> gpu_at(std::string_view address) const;

 private:
  std::map<std::string, int> by_domain_bus_dev_;  // normalised "DDDD:BB:DD"
  // GPU or port "DDDD:BB:DD.F" -> the GPU's "DDDD:BB:DD.F".
  std::map<std::string, std::string> gpu_by_address_;
};

// Turns kernel-log lines, in order, into events. It remembers what the
// last lines began (an AER burst, an NVRM message that goes on over several
// lines, an SXid's detail lines), so that one error yields one event.
class KernelLogClassifier {
 public:
  struct Result {
    std::optional<Event> event;
    // False when no parser recognised the line (noise included): the
    // caller counts it. A line that belongs to an error that already has
    // its event is recognised and yields none.
    bool classified = false;
  };
  Result classify(std::string_view line, const PciIndex& pci);

 private:
  struct Aer {
    bool open = false;
    std::string severity;
    bool kept = false;  // the burst concerns a GPU and has its event
  } aer_;
  int nvrm_lines_to_follow_ = 0;  // continuation lines still expected
  std::string nvrm_headline_pci_;
  std::string sxid_pci_;  // of the last SXid event
  int sxid_code_ = -1;
  std::string xid79_pci_;  // "DDDD:BB:DD" of the last Xid 79
  int lines_since_xid79_ = 1 << 20;
};

// One kernel-log line (dmesg, journalctl -k, or raw /dev/kmsg record) on
// its own -> an `xid`, `oom_kill`, `nvrm`, `sxid` or `pcie_aer` event;
// nullopt for anything else. A log is read with a KernelLogClassifier.
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
  // Lines read since construction that no parser recognised.
  uint64_t unclassified_total() const;
  // Drop lines stamped (kmsg USEC, dmesg "[ sec.usec]") before this many
  // seconds after boot; a line without a stamp is kept (check --since).
  void skip_before_uptime(double uptime_s);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gd
