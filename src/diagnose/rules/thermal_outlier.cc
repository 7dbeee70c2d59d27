// thermal-outlier: among identical GPUs (same name) of the host under similar
// load, one runs much hotter than the median of its peers, or draws much more
// power at idle than its idle peers, for a good part of the window. Identical
// boards doing the same work heat alike; one that does not has a cooling
// problem (fan, airflow, thermal paste) or a failing board, often before it
// falls off the bus. Different models, different loads, or a GPU without
// peers are never compared. A sample where the GPU is already thermally
// throttled belongs to thermal-throttling (one hot GPU, one warning): this
// finding is the early one, while it still runs at full clocks.
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

// Same-model GPUs whose utilisation is within this many points of each
// other are "under the same load" (a synchronous job's ranks are).
constexpr double kLoadBandPct = 15;
// Hotter than the peers' median by this much: noise between identical
// boards under one load is a few degrees; 12 C is a cooling fault.
constexpr double kHotterC = 12;
// At or below this utilisation a GPU is idle, for the idle-power test.
constexpr double kIdleUtilPct = 5;
// Idle power above the idle peers' median by this much (an idle A100 draws
// ~50-60 W): a board leaking power at idle is failing or mis-cooled.
constexpr double kIdlePowerExcessW = 40;
// Outlying in at least this share of the samples where it had peers, and
// in at least min_samples of them: persistent, not a moment's lag.
constexpr double kMinFraction = 0.5;
constexpr double kMinSamples = 20;

double median(std::vector<double>& v) {
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2) return *mid;
  double upper = *mid;
  double lower = *std::max_element(v.begin(), mid);
  return (lower + upper) / 2;
}

class ThermalOutlierRule : public Rule {
 public:
  const char* id() const override { return "thermal-outlier"; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    band_ = config.get("thermal-outlier.load_band_pct", kLoadBandPct);
    hotter_c_ = config.get("thermal-outlier.hotter_c", kHotterC);
    idle_util_ = config.get("thermal-outlier.idle_util_pct", kIdleUtilPct);
    idle_power_w_ =
        config.get("thermal-outlier.idle_power_excess_w", kIdlePowerExcessW);
    min_fraction_ = config.get("thermal-outlier.min_fraction", kMinFraction);
    min_samples_ = config.get("thermal-outlier.min_samples", kMinSamples);
  }

  void observe(const Sample& s, const SampleContext&) override {
    readings_.clear();
    for (const auto& g : s.gpus) {
      if (g.lost || g.stale || !g.util_pct) continue;
      const GpuInfo* info = find_gpu_info(*header_, g.index);
      if (!info || info->name.empty()) continue;
      readings_.push_back({&g, info});
    }
    for (const Reading& me : readings_) compare(me, s.t);
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [index, st] : gpus_) {
      const Outlier* worst = nullptr;
      for (const Outlier* o : {&st.hot, &st.idle_power})
        if (outlying(*o) && (!worst || o->when.count > worst->when.count))
          worst = o;
      if (worst) out.push_back(make_finding(index, st, *worst));
    }
    return out;
  }

  // A GPU seen out of line with its peers, but in fewer samples than a
  // finding needs.
  std::optional<std::string> not_judged() const override {
    size_t most = 0;
    for (const auto& [index, st] : gpus_)
      for (const Outlier* o : {&st.hot, &st.idle_power})
        if (o->when.count > 0 &&
            static_cast<double>(o->when.count) < min_samples_)
          most = std::max(most, o->when.count);
    if (most == 0) return std::nullopt;
    return needs_samples("a GPU out of line with its peers", min_samples_,
                         most);
  }

 private:
  struct Reading {
    const GpuSample* gpu;
    const GpuInfo* info;
  };
  // One kind of comparison (temperature under load, or power at idle).
  struct Outlier {
    size_t compared = 0;  // samples with peers to compare with
    Span when;            // samples where it outlied
    Stat mine, peers, util, peer_count;
  };
  struct State {
    Outlier hot, idle_power;
    opt<int> min_margin_c;  // T.Limit margin while hot
  };

  bool outlying(const Outlier& o) const {
    return o.compared > 0 &&
           static_cast<double>(o.when.count) >= min_samples_ &&
           static_cast<double>(o.when.count) >=
               min_fraction_ * static_cast<double>(o.compared);
  }

  void compare(const Reading& me, double t) {
    const GpuSample& g = *me.gpu;
    double util = *g.util_pct;
    bool idle = util <= idle_util_;
    temps_.clear(), powers_.clear();
    for (const Reading& peer : readings_) {
      if (peer.gpu == me.gpu || peer.info->name != me.info->name) continue;
      double u = *peer.gpu->util_pct;
      if (std::abs(u - util) > band_) continue;
      if (g.temp_c && peer.gpu->temp_c) temps_.push_back(*peer.gpu->temp_c);
      if (idle && u <= idle_util_ && g.power_w && peer.gpu->power_w)
        powers_.push_back(*peer.gpu->power_w);
    }
    auto& st = gpus_[g.index];
    bool throttled = has_reason(g, "sw_thermal_slowdown") ||
                     has_reason(g, "hw_thermal_slowdown");
    if (!temps_.empty() && !throttled) {
      double peers = median(temps_);
      double n = static_cast<double>(temps_.size());
      record(st.hot, *g.temp_c, peers, util, n, t,
             *g.temp_c - peers >= hotter_c_);
      if (*g.temp_c - peers >= hotter_c_ && g.temp_limit_margin_c &&
          (!st.min_margin_c || *g.temp_limit_margin_c < *st.min_margin_c))
        st.min_margin_c = g.temp_limit_margin_c;
    }
    if (!powers_.empty()) {
      double peers = median(powers_);
      double n = static_cast<double>(powers_.size());
      record(st.idle_power, *g.power_w, peers, util, n, t,
             *g.power_w - peers >= idle_power_w_);
    }
  }

  static void record(Outlier& o, double mine, double peers, double util,
                     double n, double t, bool out) {
    ++o.compared;
    if (!out) return;
    o.when.add(t);
    o.mine.add(mine), o.peers.add(peers), o.util.add(util), o.peer_count.add(n);
  }

  Finding make_finding(int index, const State& st, const Outlier& o) const {
    const GpuInfo* info = find_gpu_info(*header_, index);
    bool hot = &o == &st.hot;
    Finding f;
    f.id = id();
    f.severity = "warning";
    f.gpus = {index};
    f.title = fmt::format("{} runs {} than identical GPUs under the same load",
                          gpu_label(*header_, index),
                          hot ? "hotter" : "at higher idle power");
    std::string measure =
        hot ? fmt::format("{:.0f} C vs the peers' median {:.0f} C (+{:.0f} C)",
                          o.mine.mean(), o.peers.mean(),
                          o.mine.mean() - o.peers.mean())
            : fmt::format(
                  "{:.0f} W at idle vs the idle peers' median {:.0f} W "
                  "(+{:.0f} W)",
                  o.mine.mean(), o.peers.mean(),
                  o.mine.mean() - o.peers.mean());
    f.evidence = fmt::format(
        "{} on average, in {} of the {} samples it had peers ({} other {} "
        "within {:.0f} util points), at ~{:.0f}% util; {}",
        measure, o.when.count, o.compared, static_cast<int>(o.peer_count.max),
        info ? info->name : "GPU", band_, o.util.mean(),
        format_range(o.when.first, o.when.last));
    if (hot && st.min_margin_c)
      f.evidence +=
          fmt::format("; T.Limit margin down to {} C", *st.min_margin_c);
    if (hot && info && info->temp_max_operating_c)
      f.evidence +=
          fmt::format("; max operating {} C", *info->temp_max_operating_c);
    f.start = o.when.first;
    f.end = o.when.last;
    f.action = fmt::format(
        "GPU {} is cooled or powered worse than its identical neighbours: "
        "check its fan (or the chassis fans and airflow in front of that "
        "slot, blanking panels, cable obstruction), the heatsink seating and "
        "thermal paste, and the board itself (swap its slot with a peer to "
        "see whether the heat follows the card). Watch it: a board running "
        "this far from its peers often throttles next or falls off the bus "
        "(Xid 79).",
        index);
    return f;
  }

  const TraceHeader* header_ = nullptr;
  double band_ = kLoadBandPct, hotter_c_ = kHotterC, idle_util_ = kIdleUtilPct;
  double idle_power_w_ = kIdlePowerExcessW, min_fraction_ = kMinFraction;
  double min_samples_ = kMinSamples;
  std::vector<Reading> readings_;       // this sample's comparable GPUs
  std::vector<double> temps_, powers_;  // peers' readings, reused
  std::map<int, State> gpus_;           // bounded by the number of GPUs
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_thermal_outlier_rule() {
  return std::make_unique<ThermalOutlierRule>();
}

}  // namespace gd
