// pcie-aer-errors: the kernel logged PCIe Advanced Error Reporting errors
// for a GPU's link or the port above it (events of kind pcie_aer, with a
// severity). Uncorrected errors (non-fatal or fatal) lose or corrupt
// transactions: critical. Corrected ones are retried by the link and cost
// only bandwidth, but when they keep coming the link's signal is marginal
// (riser, slot, cable, retimer): a warning once they repeat. One corrected
// error now and then is normal and stays silent.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

#include "common/pci_bus_id.h"
#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"
#include "diagnose/rules/workload_common.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "pcie-aer-errors";

// "More than a few per minute": at 3 a minute a link logs ~4000 a day,
// which no healthy link does (a healthy one logs a handful a year).
constexpr double kCorrectedPerMin = 3;
// And at least this many in all, so that two errors a second apart do not
// read as a rate of 120 a minute.
constexpr double kMinCorrectedCount = 5;
// A burst is measured over at least a minute.
constexpr double kMinRateSpanS = 60;

constexpr const char* kCorrected = "corrected";
constexpr const char* kNonFatal = "uncorrected_non_fatal";
constexpr const char* kFatal = "fatal";

struct Link {
  Span corrected, non_fatal, fatal, all;
  std::string first_text, worst_text;
};

class PcieAerErrorsRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    per_min_ =
        workload::threshold(config, kId, "corrected_per_min", kCorrectedPerMin);
    min_count_ = workload::threshold(config, kId, "min_corrected_count",
                                     kMinCorrectedCount);
  }

  void observe(const Sample& s, const SampleContext&) override {
    for (const Event& e : s.events) {
      if (e.kind != kEventPcieAer) continue;
      // A GPU's own address maps to the GPU; an address that maps to none
      // (typically the root port above it) is kept by address.
      std::string key =
          e.gpu ? fmt::format("gpu {}", *e.gpu) : "pci " + e.pci_address;
      Link& link = links_[key];
      if (e.gpu) gpu_of_[key] = *e.gpu;
      link.all.add(event_time(e, s.t));
      if (link.first_text.empty()) link.first_text = e.text;
      if (e.severity == kFatal) {
        link.fatal.add(event_time(e, s.t));
        link.worst_text = e.text;
      } else if (e.severity == kNonFatal) {
        link.non_fatal.add(event_time(e, s.t));
        if (link.fatal.empty()) link.worst_text = e.text;
      } else if (e.severity == kCorrected) {
        link.corrected.add(event_time(e, s.t));
      }
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [key, link] : links_) {
      bool uncorrected = !link.fatal.empty() || !link.non_fatal.empty();
      double rate = corrected_rate(link);
      bool storm = static_cast<double>(link.corrected.count) >= min_count_ &&
                   rate >= per_min_;
      if (!uncorrected && !storm) continue;
      out.push_back(describe(key, link, uncorrected, rate));
    }
    return out;
  }

  std::optional<std::string> not_judged() const override {
    return needs_kernel_log(*header_, "PCIe AER");
  }

 private:
  // Corrected errors per minute over the span they came in.
  double corrected_rate(const Link& link) const {
    if (link.corrected.empty()) return 0;
    double span =
        std::max(kMinRateSpanS, link.corrected.last - link.corrected.first);
    return 60 * static_cast<double>(link.corrected.count) / span;
  }

  Finding describe(const std::string& key, const Link& link, bool uncorrected,
                   double rate) const {
    Finding f;
    f.id = kId;
    f.severity = uncorrected ? "critical" : "warning";
    auto gpu = gpu_of_.find(key);
    std::string where;
    if (gpu != gpu_of_.end()) {
      f.gpus = {gpu->second};
      where = gpu_label(*header_, gpu->second);
    } else {
      where = fmt::format(
          "PCI {} (no GPU has that address: the port above "
          "one, or a GPU NVML does not list)",
          key.substr(4));
    }
    f.start = link.all.first;
    f.end = link.all.last;
    std::string name = gpu != gpu_of_.end()
                           ? fmt::format("GPU {}", gpu->second)
                           : fmt::format("PCI {}", key.substr(4));
    f.title = uncorrected
                  ? fmt::format("Uncorrected PCIe errors on {}'s link", name)
                  : fmt::format(
                        "Corrected PCIe errors keep repeating on {}'s "
                        "link",
                        name);
    std::string counts = fmt::format(
        "{} fatal, {} uncorrected non-fatal, {} corrected", link.fatal.count,
        link.non_fatal.count, link.corrected.count);
    std::string rate_text =
        link.corrected.empty()
            ? std::string()
            : fmt::format(" (corrected: {:.1f} a minute)", rate);
    f.evidence = fmt::format("{}: PCIe AER errors {}{}; {} \"{}\"; {}", where,
                             counts, rate_text, uncorrected ? "worst" : "first",
                             uncorrected ? link.worst_text : link.first_text,
                             format_range(link.all.first, link.all.last));
    std::string address =
        gpu != gpu_of_.end() ? std::string("<GPU address>") : key.substr(4);
    if (gpu != gpu_of_.end())
      if (const GpuInfo* info = find_gpu_info(*header_, gpu->second))
        address =
            canonical_pci_bus_id(info->pci_bus_id).value_or(info->pci_bus_id);
    f.action =
        uncorrected
            ? fmt::format(
                  "Drain the GPU: uncorrected PCIe errors lose transactions, "
                  "and a fatal one resets the link (the GPU may fall off the "
                  "bus). Check `lspci -s {} -vv` (LnkSta, UESta/CESta) and "
                  "reseat the GPU, its riser and cables; if errors return, "
                  "move it to another slot to tell the board from the slot.",
                  address)
            : fmt::format(
                  "The link is marginal (signal integrity): check `lspci -s "
                  "{} -vv` (CESta, LnkSta) and reseat or replace the riser, "
                  "cable or retimer; try another slot. Corrected errors cost "
                  "bandwidth now and often precede uncorrected ones.",
                  address);
    return f;
  }

  const TraceHeader* header_ = nullptr;
  double per_min_ = kCorrectedPerMin, min_count_ = kMinCorrectedCount;
  std::map<std::string, Link> links_;
  std::map<std::string, int> gpu_of_;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_pcie_aer_errors_rule() {
  return std::make_unique<PcieAerErrorsRule>();
}

}  // namespace gd
