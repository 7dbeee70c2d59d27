// power-brake: an external signal forces the GPU slow — hw_power_brake_slowdown
// is active, or hw_slowdown is active with no thermal explanation (no thermal
// reason and the GPU below its slowdown temperature; NVIDIA documents
// hw_slowdown as thermal OR power-brake OR fast power protection, so the
// thermal case is left to thermal-throttling).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

// NVIDIA notes hw_slowdown may show briefly during P-state/clock changes; a
// brake held for this many consecutive samples is not such a blip.
constexpr double kMinRunSamples = 3;

class PowerBrakeRule : public Rule {
 public:
  const char* id() const override { return "power-brake"; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    min_run_ = config.get("power-brake.min_run_samples", kMinRunSamples);
  }

  void observe(const Sample& s, const SampleContext&) override {
    for (const auto& g : s.gpus) {
      if (g.lost || g.stale) continue;
      ++readings_;
      if (!g.clock_event_reasons) continue;
      auto& st = gpus_[g.index];
      ++st.known;
      bool brake = has_reason(g, "hw_power_brake_slowdown");
      bool slowdown = has_reason(g, "hw_slowdown") && !thermal_explains(g);
      if (!brake && !slowdown) {
        st.run = 0;
        continue;
      }
      st.active.add(s.t);
      if (brake) ++st.brake;
      if (st.run++ == 0) st.run_start = s.t;
      if (st.run > st.longest) {
        st.longest = st.run;
        st.longest_start = st.run_start;
        st.longest_end = s.t;
      }
      if (g.sm_clock_mhz) st.clock.add(*g.sm_clock_mhz);
      if (g.power_w) st.power.add(*g.power_w);
      if (g.temp_c) st.temp.add(*g.temp_c);
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [index, st] : gpus_) {
      if (static_cast<double>(st.longest) < min_run_) continue;
      out.push_back(make_finding(index, st));
    }
    return out;
  }

  // Without clock event reasons there is nothing to judge by; a brake still
  // on when the window ended, too briefly to tell from a clock-change blip,
  // may be the start of a real one.
  std::optional<std::string> not_judged() const override {
    if (readings_ > 0 && gpus_.empty())
      return needs_field("the GPUs' clock event reasons", readings_);
    size_t most = 0;
    for (const auto& [index, st] : gpus_)
      if (st.run > 0 && static_cast<double>(st.longest) < min_run_)
        most = std::max(most, st.run);
    if (most == 0) return std::nullopt;
    return needs_samples("a power brake in a row", min_run_, most);
  }

 private:
  struct State {
    size_t known = 0, brake = 0, run = 0, longest = 0;
    double run_start = 0, longest_start = 0, longest_end = 0;
    Span active;
    Stat clock, power, temp;
  };

  bool thermal_explains(const GpuSample& g) const {
    if (has_reason(g, "hw_thermal_slowdown") ||
        has_reason(g, "sw_thermal_slowdown"))
      return true;
    const GpuInfo* info = find_gpu_info(*header_, g.index);
    return g.temp_c && info && info->temp_slowdown_c &&
           *g.temp_c >= *info->temp_slowdown_c;
  }

  Finding make_finding(int index, const State& st) const {
    const GpuInfo* info = find_gpu_info(*header_, index);
    Finding f;
    f.id = id();
    f.severity = "critical";
    f.gpus = {index};
    f.start = st.active.first;
    f.end = st.active.last;
    f.title = fmt::format("{} is slowed by an external power brake",
                          gpu_label(*header_, index));
    const char* reason =
        st.brake > 0 ? "hw_power_brake_slowdown" : "hw_slowdown";
    std::vector<std::string> parts;
    parts.push_back(fmt::format(
        "{} active in {} of {} samples ({}), longest {} consecutive samples {}",
        reason, st.active.count, st.known,
        format_fraction(static_cast<double>(st.active.count) /
                        static_cast<double>(st.known)),
        st.longest, format_range(st.longest_start, st.longest_end)));
    if (!st.clock.empty()) {
      std::string c = fmt::format("SM clock avg {:.0f} MHz", st.clock.mean());
      if (info && info->sm_clock_max_mhz)
        c += fmt::format(" vs max {} MHz", *info->sm_clock_max_mhz);
      parts.push_back(c);
    }
    if (!st.power.empty()) {
      std::string p = fmt::format("power avg {:.0f} W", st.power.mean());
      if (info && info->power_limit_w)
        p += fmt::format(" of {:.0f} W limit", *info->power_limit_w);
      parts.push_back(p);
    }
    if (!st.temp.empty())
      parts.push_back(
          fmt::format("{:.0f} C max, no thermal reason active", st.temp.max));
    f.evidence = fmt::format("{}", fmt::join(parts, "; "));
    if (st.brake > 0)
      f.action =
          "The board or system asserted the power-brake signal. Check the "
          "BMC/iDRAC/iLO event log and the power supplies (failed or "
          "missing PSU, lost redundancy, PSU capacity), and whether the "
          "server firmware recognises this GPU model (an unrecognised card "
          "can be braked by the BMC: update BMC/BIOS firmware).";
    else
      f.action =
          "hw_slowdown without a thermal cause points at power delivery: "
          "check the GPU's auxiliary power cables, the power supplies and "
          "the BMC event log for power-brake or over-current events.";
    return f;
  }

  const TraceHeader* header_ = nullptr;
  double min_run_ = kMinRunSamples;
  size_t readings_ = 0;        // GPU readings (lost and stale ones aside)
  std::map<int, State> gpus_;  // bounded by the number of GPUs
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_power_brake_rule() {
  return std::make_unique<PowerBrakeRule>();
}

}  // namespace gd
