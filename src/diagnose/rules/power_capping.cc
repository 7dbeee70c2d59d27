// power-capping: while busy, sw_power_cap holds the SM clock well under its
// maximum — the GPU wants more power than its limit allows. Silent when the
// clocks are near max (the cap flag alone costs nothing) or when the maximum
// clock is unknown (then "well under max" cannot be shown).
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

// Below ~30% utilisation the GPU is not asking for power.
constexpr double kBusyUtilPct = 30;
// "Well under max": below 85% of the max SM clock. Boost wanders a few
// percent under max on its own; 15% is a real throughput loss.
constexpr double kClockRatio = 0.85;
// Capped in at least 30% of busy time: occasional cap hits during power
// spikes are normal for power-hungry kernels.
constexpr double kMinFraction = 0.3;
constexpr double kMinSamples = 3;

class PowerCappingRule : public Rule {
 public:
  const char* id() const override { return "power-capping"; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    busy_util_pct_ = config.get("power-capping.busy_util_pct", kBusyUtilPct);
    clock_ratio_ = config.get("power-capping.clock_ratio", kClockRatio);
    min_fraction_ = config.get("power-capping.min_fraction", kMinFraction);
    min_samples_ = config.get("power-capping.min_samples", kMinSamples);
  }

  void observe(const Sample& s, const SampleContext&) override {
    for (const auto& g : s.gpus) {
      if (!g.clock_event_reasons || !g.sm_clock_mhz ||
          !gpu_busy(g, busy_util_pct_))
        continue;
      const GpuInfo* info = find_gpu_info(*header_, g.index);
      if (!info || !info->sm_clock_max_mhz) continue;
      auto& st = gpus_[g.index];
      ++st.busy;
      if (!has_reason(g, "sw_power_cap")) continue;
      if (*g.sm_clock_mhz >= clock_ratio_ * *info->sm_clock_max_mhz) continue;
      st.capped.add(s.t);
      st.clock.add(*g.sm_clock_mhz);
      if (g.power_w) st.power.add(*g.power_w);
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [index, st] : gpus_) {
      double n = static_cast<double>(st.capped.count);
      if (st.busy == 0 || n < min_samples_) continue;
      double fraction = n / static_cast<double>(st.busy);
      if (fraction < min_fraction_) continue;
      out.push_back(make_finding(index, st, fraction));
    }
    return out;
  }

  // Capping seen, but in fewer samples than a finding needs.
  std::optional<std::string> not_judged() const override {
    size_t most = 0;
    for (const auto& [index, st] : gpus_)
      if (st.capped.count > 0 &&
          static_cast<double>(st.capped.count) < min_samples_)
        most = std::max(most, st.capped.count);
    if (most == 0) return std::nullopt;
    return needs_samples("a busy GPU held by its power cap", min_samples_,
                         most);
  }

 private:
  struct State {
    size_t busy = 0;
    Span capped;
    Stat clock, power;
  };

  Finding make_finding(int index, const State& st, double fraction) const {
    const GpuInfo& info = *find_gpu_info(*header_, index);
    Finding f;
    f.id = id();
    f.severity = "info";
    f.gpus = {index};
    f.start = st.capped.first;
    f.end = st.capped.last;
    f.title = fmt::format("{} is held back by its power limit",
                          gpu_label(*header_, index));
    std::vector<std::string> parts;
    parts.push_back(
        fmt::format("sw_power_cap with SM clock under {} of max in {} of {} "
                    "busy samples, {}",
                    format_fraction(clock_ratio_), format_fraction(fraction),
                    st.busy, format_range(st.capped.first, st.capped.last)));
    parts.push_back(fmt::format("SM clock avg {:.0f} MHz vs max {} MHz",
                                st.clock.mean(), *info.sm_clock_max_mhz));
    if (!st.power.empty()) {
      std::string p = fmt::format("power avg {:.0f} W", st.power.mean());
      if (info.power_limit_w)
        p += fmt::format(" at a {:.0f} W limit", *info.power_limit_w);
      if (info.power_default_limit_w)
        p += fmt::format(" (default {:.0f} W)", *info.power_default_limit_w);
      parts.push_back(p);
    }
    f.evidence = fmt::format("{}", fmt::join(parts, "; "));
    if (info.power_limit_w && info.power_default_limit_w &&
        *info.power_limit_w < *info.power_default_limit_w - 1) {
      f.action = fmt::format(
          "The power limit was lowered from the default {:.0f} W to {:.0f} W. "
          "If "
          "the site's power budget allows, restore it: nvidia-smi -i {} -pl "
          "{:.0f}.",
          *info.power_default_limit_w, *info.power_limit_w, index,
          *info.power_default_limit_w);
    } else {
      f.action =
          "The GPU runs at its default power limit and the workload wants "
          "more: normal for power-heavy kernels. Nothing is broken; a higher "
          "limit (nvidia-smi -pl, up to the board maximum) or a better "
          "perf-per-watt setting (e.g. lower application clocks) are the "
          "only levers.";
    }
    return f;
  }

  const TraceHeader* header_ = nullptr;
  double busy_util_pct_ = kBusyUtilPct, clock_ratio_ = kClockRatio;
  double min_fraction_ = kMinFraction, min_samples_ = kMinSamples;
  std::map<int, State> gpus_;  // bounded by the number of GPUs
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_power_capping_rule() {
  return std::make_unique<PowerCappingRule>();
}

}  // namespace gd
