// pcie-link-degraded: the PCIe link runs below its maximum generation or
// width while data moves over it. GPUs down-train the link when idle to save
// power and train back up under load, so only samples with real traffic
// count; a link that is slow only while idle is normal.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

// 100 MB/s of tx+rx is real data movement; monitoring and driver chatter on
// an idle GPU is orders of magnitude less.
constexpr double kMinTrafficBytesPerS = 100e6;
// Where throughput is unknown, a GPU this busy is taken as using its link.
constexpr double kBusyUtilPct = 50;
// The link retrains within milliseconds when load arrives, but a sample can
// straddle the transition: degraded in at least half of the active samples.
constexpr double kMinFraction = 0.5;
constexpr double kMinSamples = 3;

class PcieLinkDegradedRule : public Rule {
 public:
  const char* id() const override { return "pcie-link-degraded"; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    min_traffic_ = config.get("pcie-link-degraded.min_traffic_bytes_per_s",
                              kMinTrafficBytesPerS);
    busy_util_pct_ =
        config.get("pcie-link-degraded.busy_util_pct", kBusyUtilPct);
    min_fraction_ = config.get("pcie-link-degraded.min_fraction", kMinFraction);
    min_samples_ = config.get("pcie-link-degraded.min_samples", kMinSamples);
  }

  void observe(const Sample& s, const SampleContext&) override {
    for (const auto& g : s.gpus) {
      if (g.lost || g.stale || !g.pcie_gen || !g.pcie_width) continue;
      const GpuInfo* info = find_gpu_info(*header_, g.index);
      if (!info || (!info->pcie_max_gen && !info->pcie_max_width)) continue;
      auto& st = gpus_[g.index];
      if (g.pcie_replay_total) st.replays.add(*g.pcie_replay_total);
      opt<double> traffic;
      if (g.pcie_tx_bytes_per_s && g.pcie_rx_bytes_per_s)
        traffic = static_cast<double>(*g.pcie_tx_bytes_per_s +
                                      *g.pcie_rx_bytes_per_s);
      bool active = traffic ? *traffic >= min_traffic_
                            : (g.util_pct && *g.util_pct >= busy_util_pct_);
      if (!active) continue;
      ++st.active;
      bool gen_low = info->pcie_max_gen && *g.pcie_gen < *info->pcie_max_gen;
      bool width_low =
          info->pcie_max_width && *g.pcie_width < *info->pcie_max_width;
      if (!gen_low && !width_low) continue;
      st.degraded.add(s.t);
      if (gen_low) ++st.gen_low;
      if (width_low) ++st.width_low;
      st.gen.add(*g.pcie_gen);
      st.width.add(*g.pcie_width);
      if (traffic) st.traffic.add(*traffic);
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [index, st] : gpus_) {
      double n = static_cast<double>(st.degraded.count);
      if (st.active == 0 || n < min_samples_) continue;
      double fraction = n / static_cast<double>(st.active);
      if (fraction < min_fraction_) continue;
      out.push_back(make_finding(index, st, fraction));
    }
    return out;
  }

  // A slow link seen, but in fewer samples than a finding needs.
  std::optional<std::string> not_judged() const override {
    size_t most = 0;
    for (const auto& [index, st] : gpus_)
      if (st.degraded.count > 0 &&
          static_cast<double>(st.degraded.count) < min_samples_)
        most = std::max(most, st.degraded.count);
    if (most == 0) return std::nullopt;
    return needs_samples("a down-trained link moving data", min_samples_, most);
  }

 private:
  // Growth of the cumulative replay counter (a drop = reset, new baseline).
  struct Replays {
    opt<uint64_t> prev;
    uint64_t growth = 0;
    void add(uint64_t v) {
      if (prev && v > *prev) growth += v - *prev;
      prev = v;
    }
  };
  struct State {
    size_t active = 0, gen_low = 0, width_low = 0;
    Span degraded;
    Stat gen, width, traffic;
    Replays replays;
  };

  Finding make_finding(int index, const State& st, double fraction) const {
    const GpuInfo& info = *find_gpu_info(*header_, index);
    Finding f;
    f.id = id();
    f.severity = "warning";
    f.gpus = {index};
    f.start = st.degraded.first;
    f.end = st.degraded.last;
    auto max_text = [&]() {
      return fmt::format(
          "Gen{} x{}",
          info.pcie_max_gen ? std::to_string(*info.pcie_max_gen) : "?",
          info.pcie_max_width ? std::to_string(*info.pcie_max_width) : "?");
    };
    std::string now =
        fmt::format("Gen{:.0f} x{:.0f}", st.gen.min, st.width.min);
    f.title = fmt::format("{} PCIe link runs at {} instead of {} under load",
                          gpu_label(*header_, index), now, max_text());
    std::vector<std::string> parts;
    parts.push_back(
        fmt::format("link at {} (max {}) in {} of {} samples moving data, {}",
                    now, max_text(), format_fraction(fraction), st.active,
                    format_range(st.degraded.first, st.degraded.last)));
    if (!st.traffic.empty())
      parts.push_back(fmt::format("traffic avg {:.2f} GB/s while degraded",
                                  st.traffic.mean() / 1e9));
    if (st.replays.growth > 0)
      parts.push_back(
          fmt::format("PCIe replay counter grew by {}", st.replays.growth));
    f.evidence = fmt::format("{}", fmt::join(parts, "; "));

    if (st.width_low > 0)
      f.action =
          "The link lost lanes: power down and reseat the GPU (and riser or "
          "cable), check the slot for damage or debris; compare `lspci -vv` "
          "LnkSta with LnkCap. If it stays narrow in another slot, the card "
          "needs service.";
    else
      f.action =
          "The link trained at a lower speed: check the BIOS PCIe speed "
          "setting for this slot, risers/retimers and cables, and the kernel "
          "log for PCIe AER errors; compare `lspci -vv` LnkSta with LnkCap. "
          "Reseat the card if nothing is configured low.";
    if (st.replays.growth > 0)
      f.action +=
          " Growing replays point at signal integrity (seating, riser, cable).";
    return f;
  }

  const TraceHeader* header_ = nullptr;
  double min_traffic_ = kMinTrafficBytesPerS, busy_util_pct_ = kBusyUtilPct;
  double min_fraction_ = kMinFraction, min_samples_ = kMinSamples;
  std::map<int, State> gpus_;  // bounded by the number of GPUs
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_pcie_link_degraded_rule() {
  return std::make_unique<PcieLinkDegradedRule>();
}

}  // namespace gd
