// thermal-throttling: while the GPU is busy, the driver reports a thermal
// clock-event reason (sw_thermal_slowdown / hw_thermal_slowdown) and the SM
// clock really is held below its maximum. A hot GPU with no thermal reason
// and clocks at max is working as designed and stays silent.
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

constexpr const char* kId = "thermal-throttling";
// Below ~30% utilisation clocks drop for idleness anyway; throttling only
// costs anything when there is work to slow down.
constexpr double kBusyUtilPct = 30;
// Boost algorithms touch the thermal limit briefly on any well-loaded GPU;
// throttling in a fifth of the busy time is a real loss of throughput.
constexpr double kMinFraction = 0.2;
// A couple of samples can be one transient; need at least this many.
constexpr double kMinSamples = 3;
// "Held down": average SM clock while throttled under 95% of max (boost
// clocks wander a few percent below max without any limit active).
constexpr double kClockRatio = 0.95;

class ThermalThrottlingRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    busy_util_pct_ =
        config.get("thermal-throttling.busy_util_pct", kBusyUtilPct);
    min_fraction_ = config.get("thermal-throttling.min_fraction", kMinFraction);
    min_samples_ = config.get("thermal-throttling.min_samples", kMinSamples);
    clock_ratio_ = config.get("thermal-throttling.clock_ratio", kClockRatio);
  }

  void observe(const Sample& s, const SampleContext&) override {
    for (const auto& g : s.gpus) {
      if (!g.clock_event_reasons || !gpu_busy(g, busy_util_pct_)) continue;
      auto& st = gpus_[g.index];
      ++st.busy;
      bool sw = has_reason(g, "sw_thermal_slowdown");
      bool hw = has_reason(g, "hw_thermal_slowdown");
      if (!sw && !hw) continue;
      st.throttled.add(s.t);
      if (sw) ++st.sw;
      if (hw) ++st.hw;
      if (g.sm_clock_mhz) st.clock.add(*g.sm_clock_mhz);
      if (g.temp_c) st.temp.add(*g.temp_c);
      if (g.mem_temp_c) st.mem_temp.add(*g.mem_temp_c);
    }
  }

  std::vector<Finding> finish() override {
    std::vector<std::pair<int, double>> hits;  // (gpu, throttled fraction)
    for (const auto& [index, st] : gpus_) {
      if (st.busy == 0) continue;
      double n = static_cast<double>(st.throttled.count);
      double fraction = n / static_cast<double>(st.busy);
      if (n < min_samples_ || fraction < min_fraction_) continue;
      const GpuInfo* info = find_gpu_info(*header_, index);
      opt<int> max_clock = info ? info->sm_clock_max_mhz : std::nullopt;
      if (max_clock && !st.clock.empty() &&
          st.clock.mean() > clock_ratio_ * *max_clock)
        continue;  // reason set, but clocks are at max: nothing is lost
      hits.emplace_back(index, fraction);
    }
    std::vector<Finding> out;
    for (const auto& [index, fraction] : hits)
      out.push_back(make_finding(index, gpus_.at(index), fraction,
                                 find_gpu_info(*header_, index), hits.size()));
    return out;
  }

  // Throttling seen, but in fewer samples than a finding needs.
  std::optional<std::string> not_judged() const override {
    size_t most = 0;
    for (const auto& [index, st] : gpus_)
      if (st.throttled.count > 0 &&
          static_cast<double>(st.throttled.count) < min_samples_)
        most = std::max(most, st.throttled.count);
    if (most == 0) return std::nullopt;
    return needs_samples("a busy GPU held down by a thermal reason",
                         min_samples_, most);
  }

 private:
  struct State {
    size_t busy = 0, sw = 0, hw = 0;
    Span throttled;
    Stat clock, temp, mem_temp;
  };

  Finding make_finding(int index, const State& st, double fraction,
                       const GpuInfo* info, size_t throttled_gpus) const {
    Finding f;
    f.id = id();
    f.severity = "warning";
    f.gpus = {index};
    f.start = st.throttled.first;
    f.end = st.throttled.last;
    f.title =
        fmt::format("{} is thermally throttled", gpu_label(*header_, index));
    std::string reason =
        st.hw >= st.sw ? "hw_thermal_slowdown" : "sw_thermal_slowdown";
    if (st.hw && st.sw) reason = "sw_thermal_slowdown/hw_thermal_slowdown";
    std::vector<std::string> parts;
    parts.push_back(
        fmt::format("{} active in {} of {} busy samples, {}", reason,
                    format_fraction(fraction), st.busy,
                    format_range(st.throttled.first, st.throttled.last)));
    if (!st.clock.empty()) {
      std::string c = fmt::format("SM clock avg {:.0f} MHz (min {:.0f})",
                                  st.clock.mean(), st.clock.min);
      if (info && info->sm_clock_max_mhz)
        c += fmt::format(" vs max {} MHz", *info->sm_clock_max_mhz);
      parts.push_back(c);
    }
    bool near_limit = false;
    if (!st.temp.empty()) {
      std::string t = fmt::format("{:.0f} C avg, {:.0f} C max", st.temp.mean(),
                                  st.temp.max);
      if (info && info->temp_slowdown_c) {
        t += fmt::format(" vs slowdown {} C", *info->temp_slowdown_c);
        near_limit = st.temp.max >= *info->temp_slowdown_c - 5;
      }
      parts.push_back(t);
    }
    if (!st.mem_temp.empty())
      parts.push_back(fmt::format("memory {:.0f} C max", st.mem_temp.max));
    f.evidence = fmt::format("{}", fmt::join(parts, "; "));

    if (st.hw > 0)
      f.action =
          "The hardware thermal limit engaged (clocks cut hard): check this "
          "GPU's cooling now — fans (nvidia-smi fan %, BMC fan status), "
          "blocked airflow, inlet temperature, heatsink seating.";
    else
      f.action =
          "The driver is lowering clocks to stay under its temperature "
          "target: improve cooling — check fan speed and failures, airflow "
          "(blanking panels, cable clutter), and data-centre inlet "
          "temperature.";
    if (!near_limit && !st.mem_temp.empty() && !st.temp.empty() &&
        st.mem_temp.max > st.temp.max)
      f.action +=
          " The GPU core is below its slowdown point but the memory is "
          "hotter: memory (HBM) temperature is the likely trigger.";
    size_t total = header_->gpus.size();
    if (throttled_gpus == 1 && total > 1)
      f.action += fmt::format(
          " Only this GPU of {} throttles: suspect its own fan, airflow path "
          "or thermal interface and have it serviced.",
          total);
    else if (throttled_gpus > 1)
      f.action += fmt::format(
          " {} GPUs of this host throttle: look at the chassis cooling and "
          "room temperature rather than one card.",
          throttled_gpus);
    return f;
  }

  const TraceHeader* header_ = nullptr;
  double busy_util_pct_ = kBusyUtilPct, min_fraction_ = kMinFraction;
  double min_samples_ = kMinSamples, clock_ratio_ = kClockRatio;
  std::map<int, State> gpus_;  // bounded by the number of GPUs
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_thermal_throttling_rule() {
  return std::make_unique<ThermalThrottlingRule>();
}

}  // namespace gd
