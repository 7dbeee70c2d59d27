// gpu-missing: a GPU the machine has that NVML does not enumerate. Two ways
// to see it:
//  - the PCI bus lists an NVIDIA GPU (header pci_gpus) bound to `nvidia` or
//    to no driver at all, and no GPU of header.gpus has its address: the
//    driver failed to initialise it (RmInitAdapter failed) or it fell off
//    the bus before NVML started;
//  - a GPU of header.gpus stops appearing in the samples' gpus[]: NVML's
//    count dropped while the collector ran.
// Silent for a device bound to another driver (vfio-pci: passed through to a
// VM on purpose) and when the bus was not looked at (pci_gpus absent).
// A GPU that NVML still lists but marks lost is `gpu-lost`, not this.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/pci_bus_id.h"
#include "diagnose/evidence.h"
#include "diagnose/rule.h"
#include "diagnose/rules/workload_common.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "gpu-missing";

// One sample without the GPU is already a drop in NVML's count: NVML does
// not flicker its enumeration (a failed read still lists the GPU).
constexpr double kMinAbsentSamples = 1;
// Driver lines quoted per GPU in the evidence; the rest are counted.
constexpr size_t kMaxQuotedLines = 3;

// Driver lines (nvrm, Xid, gpu_lost) seen about one GPU or address.
struct Lines {
  size_t count = 0;
  std::vector<std::string> quoted;
  void add(const std::string& text) {
    ++count;
    if (quoted.size() < kMaxQuotedLines) quoted.push_back(text);
  }
};

class GpuMissingRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    min_absent_ = workload::threshold(config, kId, "min_absent_samples",
                                      kMinAbsentSamples);
    for (const GpuInfo& g : header.gpus) {
      if (auto key = canonical_pci_bus_id(g.pci_bus_id))
        address_of_[g.index] = *key;
      enumerated_.push_back(g.index);
    }
    if (!header.pci_gpus) return;  // the bus was not looked at
    for (const PciGpu& p : *header.pci_gpus) {
      if (p.driver && *p.driver != "nvidia") continue;  // vfio-pci, ...
      auto key = canonical_pci_bus_id(p.address);
      if (!key) continue;
      bool known =
          std::any_of(address_of_.begin(), address_of_.end(),
                      [&](const auto& entry) { return entry.second == *key; });
      if (!known) unlisted_[*key] = p;
    }
  }

  void observe(const Sample& s, const SampleContext&) override {
    window_.add(s.t);
    // A sample where NVML failed as a whole (an nvml_error event and no GPU
    // at all) says nothing about one GPU; an empty gpus[] without an error
    // is a count of zero: the only GPU gone.
    bool nvml_failed =
        s.gpus.empty() &&
        std::any_of(s.events.begin(), s.events.end(),
                    [](const Event& e) { return e.kind == "nvml_error"; });
    if (!nvml_failed) {
      for (int index : enumerated_) {
        bool present =
            std::any_of(s.gpus.begin(), s.gpus.end(),
                        [&](const GpuSample& g) { return g.index == index; });
        Presence& p = presence_[index];
        if (present)
          p.seen.add(s.t);
        else if (!p.seen.empty())
          p.absent.add(s.t);
      }
    }
    for (const Event& e : s.events) {
      if (e.kind != kEventNvrm && e.kind != "xid" && e.kind != "gpu_lost")
        continue;
      if (e.gpu) {
        gpu_lines_[*e.gpu].add(e.text);
      } else if (auto key = canonical_pci_bus_id(e.pci_address)) {
        address_lines_[*key].add(e.text);
      }
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [key, pci] : unlisted_) out.push_back(unlisted(key, pci));
    for (const auto& [index, p] : presence_)
      if (static_cast<double>(p.absent.count) >= min_absent_)
        out.push_back(dropped(index, p));
    return out;
  }

 private:
  struct Presence {
    Span seen, absent;
  };

  static std::string quote(const Lines* lines) {
    if (!lines || lines->count == 0) return "; no driver line names it";
    std::string text =
        fmt::format("; {} driver line{} about it: \"{}\"", lines->count,
                    lines->count == 1 ? "" : "s", lines->quoted.front());
    for (size_t i = 1; i < lines->quoted.size(); ++i)
      text += fmt::format(", \"{}\"", lines->quoted[i]);
    return text;
  }

  static std::string action(const std::string& address) {
    return fmt::format(
        "Drain the node. Look at the device: `lspci -s {} -vv` (link state, "
        "errors) and `dmesg | grep -i -e NVRM -e Xid` for why the driver "
        "gave it up; collect `nvidia-bug-report.sh` before a reboot clears "
        "the log. A reboot may bring it back; if it drops out again, reseat "
        "the GPU and check its power cables and riser, then open an RMA.",
        address);
  }

  Finding unlisted(const std::string& key, const PciGpu& pci) const {
    const Lines* lines = nullptr;
    if (auto it = address_lines_.find(key); it != address_lines_.end())
      lines = &it->second;
    Finding f;
    f.id = kId;
    f.severity = "critical";
    f.start = window_.first;
    f.end = window_.last;
    f.title = fmt::format(
        "GPU at PCI {} is on the bus but NVML does not list it", pci.address);
    f.evidence = fmt::format(
        "the PCI bus lists an NVIDIA GPU at {} ({}), NVML enumerates {} GPU{} "
        "and none has that address{}; {}",
        pci.address,
        pci.driver ? fmt::format("bound to {}", *pci.driver)
                   : std::string("bound to no driver"),
        header_->gpus.size(), header_->gpus.size() == 1 ? "" : "s",
        quote(lines), format_range(window_.first, window_.last));
    f.action = action(pci.address);
    return f;
  }

  Finding dropped(int index, const Presence& p) const {
    std::string address;
    if (auto it = address_of_.find(index); it != address_of_.end())
      address = it->second;
    const Lines* lines = nullptr;
    if (auto it = gpu_lines_.find(index); it != gpu_lines_.end())
      lines = &it->second;
    else if (auto at = address_lines_.find(address); at != address_lines_.end())
      lines = &at->second;
    Finding f;
    f.id = kId;
    f.severity = "critical";
    f.gpus = {index};
    f.start = p.absent.first;
    f.end = p.absent.last;
    f.title = fmt::format("GPU {} dropped out of NVML's enumeration", index);
    f.evidence = fmt::format(
        "{} was listed until {}, then missing from {} of {} samples{}; {}",
        gpu_label(*header_, index), format_time(p.seen.last), p.absent.count,
        window_.count, quote(lines),
        format_range(p.absent.first, p.absent.last));
    f.action = action(address.empty() ? "<address>" : address);
    return f;
  }

  const TraceHeader* header_ = nullptr;
  double min_absent_ = kMinAbsentSamples;
  std::vector<int> enumerated_;
  std::map<int, std::string> address_of_;
  std::map<std::string, PciGpu> unlisted_;
  std::map<int, Presence> presence_;
  std::map<int, Lines> gpu_lines_;
  std::map<std::string, Lines> address_lines_;
  Span window_;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_gpu_missing_rule() {
  return std::make_unique<GpuMissingRule>();
}

}  // namespace gd
