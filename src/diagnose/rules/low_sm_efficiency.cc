// low-sm-efficiency: "util" (the share of time any kernel ran) says the GPU
// is busy, but GPM's SM activity (the share of time the SMs actually had
// work) is far below it: many tiny kernels, launch overhead, host-device
// synchronisation. The GPU has much more to give than its util shows. Needs
// GPM (Hopper and newer); a GPU that is simply not busy is not inefficient.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

// "Busy" by NVML's utilisation: at least this much.
constexpr double kBusyUtilPct = 80;
// SMs active less than this share of util: a well-fed training step keeps
// the SMs active for ~80-95% of the time util counts; under half is a
// launch- or sync-bound loop.
constexpr double kSmToUtilRatio = 0.5;
// In at least this share of the busy samples with GPM data, and this many.
constexpr double kMinFraction = 0.5;
constexpr double kMinSamples = 30;

class LowSmEfficiencyRule : public Rule {
 public:
  const char* id() const override { return "low-sm-efficiency"; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    busy_util_ = config.get("low-sm-efficiency.busy_util_pct", kBusyUtilPct);
    ratio_ = config.get("low-sm-efficiency.sm_to_util_ratio", kSmToUtilRatio);
    min_fraction_ = config.get("low-sm-efficiency.min_fraction", kMinFraction);
    min_samples_ = config.get("low-sm-efficiency.min_samples", kMinSamples);
  }

  void observe(const Sample& s, const SampleContext&) override {
    for (const auto& g : s.gpus) {
      if (g.lost || g.stale || !g.util_pct || !g.gpm.sm_active_pct) continue;
      if (*g.util_pct < busy_util_) continue;
      State& st = gpus_[g.index];
      ++st.busy;
      if (*g.gpm.sm_active_pct >= ratio_ * *g.util_pct) continue;
      st.when.add(s.t);
      st.util.add(*g.util_pct);
      st.sm.add(*g.gpm.sm_active_pct);
      if (g.gpm.tensor_active_pct) st.tensor.add(*g.gpm.tensor_active_pct);
      if (g.gpm.sm_occupancy_pct) st.occupancy.add(*g.gpm.sm_occupancy_pct);
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [index, st] : gpus_) {
      const double n = static_cast<double>(st.when.count);
      if (n < min_samples_ || n < min_fraction_ * static_cast<double>(st.busy))
        continue;
      out.push_back(make_finding(index, st));
    }
    return out;
  }

  // SMs seen far less active than util, but in too few samples.
  std::optional<std::string> not_judged() const override {
    size_t most = 0;
    for (const auto& [index, st] : gpus_)
      if (st.when.count > 0 &&
          static_cast<double>(st.when.count) < min_samples_)
        most = std::max(most, st.when.count);
    if (most == 0) return std::nullopt;
    return needs_samples("a busy GPU with GPM data", min_samples_, most);
  }

 private:
  struct State {
    size_t busy = 0;  // busy samples with GPM data
    Span when;        // ... where the SMs were far less active
    Stat util, sm, tensor, occupancy;
  };

  Finding make_finding(int index, const State& st) const {
    Finding f;
    f.id = id();
    f.severity = "info";
    f.gpus = {index};
    f.start = st.when.first;
    f.end = st.when.last;
    f.title = fmt::format(
        "{} looks busy ({:.0f}% util) but its SMs are active only {:.0f}% of "
        "the time",
        gpu_label(*header_, index), st.util.mean(), st.sm.mean());
    f.evidence = fmt::format(
        "util {:.0f}% but SMs active {:.0f}% (GPM) in {} of {} busy samples "
        "(SM activity under {:.0f}% of util)",
        st.util.mean(), st.sm.mean(), st.when.count, st.busy, ratio_ * 100);
    if (!st.occupancy.empty())
      f.evidence += fmt::format("; SM occupancy {:.0f}%", st.occupancy.mean());
    if (!st.tensor.empty())
      f.evidence +=
          fmt::format("; tensor cores active {:.0f}%", st.tensor.mean());
    f.evidence += "; " + format_range(st.when.first, st.when.last);
    f.action =
        "The GPU runs kernels most of the time, but they leave most SMs "
        "idle: the job is launch- or synchronisation-bound (many small "
        "kernels, small batches, host round trips). Profile a few steps "
        "with Nsight Systems (`nsys profile`) to see the gaps; capture the "
        "step with CUDA graphs (`torch.compile(mode=\"reduce-overhead\")`), "
        "fuse small operations, raise the batch size, and remove host syncs "
        "from the loop (`.item()`, `.cpu()`, `torch.cuda.synchronize()`). "
        "\"util\" alone overstates how busy this GPU is.";
    return f;
  }

  const TraceHeader* header_ = nullptr;
  double busy_util_ = kBusyUtilPct, ratio_ = kSmToUtilRatio;
  double min_fraction_ = kMinFraction, min_samples_ = kMinSamples;
  std::map<int, State> gpus_;  // bounded by the number of GPUs
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_low_sm_efficiency_rule() {
  return std::make_unique<LowSmEfficiencyRule>();
}

}  // namespace gd
