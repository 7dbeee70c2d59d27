// gpu-lost: a GPU stopped answering — NVML says "GPU is lost" (sample marked
// lost, or a gpu_lost event) or the kernel logged Xid 79 "fallen off the
// bus". The last good reading before the loss (temperature, power) hints at
// the cause (overheating and power are the usual suspects).
//
// A loss must persist: one failed read (nvidia-smi's ERR!, `read_errors`),
// a stale reading, or a "lost" that answers again within a couple of
// samples is a transient, not a GPU that fell off the bus. Xid 79 is always
// a loss.
#include <fmt/format.h>

#include <map>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

// A GPU within this many degrees of its slowdown temperature right before it
// vanished was hot enough for heat to be a plausible cause.
constexpr double kHotMarginC = 5;
// Drawing at least this share of its power limit right before it vanished
// makes the power supply a plausible cause.
constexpr double kHighPowerFraction = 0.9;

// A loss seen in this many consecutive samples (or lasting to the end of the
// window) is a lost GPU; shorter, followed by a good reading, is a transient
// failed read: a real loss does not heal without a reset.
constexpr double kMinLostSamples = 3;

constexpr int kUnknownGpu = -1;  // Xid 79 whose PCI address matched no GPU

class GpuLostRule : public Rule {
 public:
  const char* id() const override { return "gpu-lost"; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    hot_margin_c_ = config.get("gpu-lost.hot_margin_c", kHotMarginC);
    high_power_fraction_ =
        config.get("gpu-lost.high_power_fraction", kHighPowerFraction);
    min_lost_samples_ = static_cast<size_t>(
        config.get("gpu-lost.min_lost_samples", kMinLostSamples));
  }

  void observe(const Sample& s, const SampleContext&) override {
    for (const auto& g : s.gpus) {
      auto& st = gpus_[g.index];
      if (g.lost) {
        st.lost.add(s.t);
        st.in_episode = true;
        if (++st.episode_samples >= min_lost_samples_) st.persistent = true;
      } else if (!g.stale) {
        st.in_episode = false;  // answered again: the episode is over
        st.episode_samples = 0;
        if (!st.lost.empty()) st.answered_again.add(s.t);
        st.last_good_t = s.t;
        if (g.temp_c) st.last_temp_c = g.temp_c;
        if (g.power_w) st.last_power_w = g.power_w;
      }
    }
    for (const auto& e : s.events) {
      bool xid79 = e.kind == "xid" && e.code && *e.code == 79;
      if (!xid79 && e.kind != "gpu_lost") continue;
      auto& st = gpus_[e.gpu.value_or(kUnknownGpu)];
      if (xid79) {
        st.xid79.add(event_time(e, s.t));
        if (st.xid_text.empty()) st.xid_text = e.text;
      } else {
        st.lost_events.add(event_time(e, s.t));
        st.in_episode = true;
      }
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [index, st] : gpus_) {
      // Lost to the end of the window counts as persistent: it never
      // answered again.
      bool lost = st.persistent || st.in_episode || !st.xid79.empty();
      if (!lost) continue;
      out.push_back(make_finding(index, st));
    }
    return out;
  }

  // Without NVML a lost GPU shows only as Xid 79 in the kernel log (and as
  // gpu-missing on the PCI bus): the rule cannot say the GPUs answered.
  std::optional<std::string> not_judged() const override {
    const std::string& status = header_->nvml_status;
    if (status.empty() || status == kNvmlOk) return std::nullopt;
    return fmt::format("needs NVML to watch the GPUs; it did not start ({})",
                       status);
  }

 private:
  struct State {
    Span lost, answered_again, xid79, lost_events;
    bool in_episode = false;     // lost (sample or event), not answered since
    size_t episode_samples = 0;  // lost samples in the current episode
    bool persistent = false;     // some episode reached min_lost_samples
    std::string xid_text;
    opt<double> last_good_t;
    opt<int> last_temp_c;
    opt<double> last_power_w;
  };

  Finding make_finding(int index, const State& st) const {
    Finding f;
    f.id = id();
    f.severity = "critical";
    std::string who = index == kUnknownGpu ? "A GPU (PCI address not matched)"
                                           : gpu_label(*header_, index);
    if (index != kUnknownGpu) f.gpus = {index};
    f.title = fmt::format("{} fell off the bus / stopped answering", who);

    std::vector<std::string> parts;
    double start = 0, end = 0;
    bool have_time = false;
    auto widen = [&](const Span& s) {
      if (s.empty()) return;
      start = have_time ? std::min(start, s.first) : s.first;
      end = have_time ? std::max(end, s.last) : s.last;
      have_time = true;
    };
    if (!st.lost.empty()) {
      parts.push_back(
          fmt::format("NVML reported the GPU lost in {} sample{}, {}",
                      st.lost.count, st.lost.count == 1 ? "" : "s",
                      format_range(st.lost.first, st.lost.last)));
      widen(st.lost);
    }
    if (!st.lost_events.empty()) {
      parts.push_back(fmt::format("{} 'GPU is lost' event{} from {}",
                                  st.lost_events.count,
                                  st.lost_events.count == 1 ? "" : "s",
                                  format_time(st.lost_events.first)));
      widen(st.lost_events);
    }
    if (!st.xid79.empty()) {
      parts.push_back(fmt::format("kernel logged Xid 79 {}x from {}: \"{}\"",
                                  st.xid79.count, format_time(st.xid79.first),
                                  st.xid_text));
      widen(st.xid79);
    }
    bool hot = false, high_power = false;
    const GpuInfo* info =
        index == kUnknownGpu ? nullptr : find_gpu_info(*header_, index);
    if (st.last_good_t && (st.last_temp_c || st.last_power_w)) {
      std::string last =
          fmt::format("last good reading at {}:", format_time(*st.last_good_t));
      if (st.last_temp_c) {
        last += fmt::format(" {} C", *st.last_temp_c);
        if (info && info->temp_slowdown_c) {
          last += fmt::format(" (slowdown {} C)", *info->temp_slowdown_c);
          hot = *st.last_temp_c >= *info->temp_slowdown_c - hot_margin_c_;
        }
      }
      if (st.last_power_w) {
        last += fmt::format(" {:.0f} W", *st.last_power_w);
        if (info && info->power_limit_w && *info->power_limit_w > 0) {
          last += fmt::format(" of {:.0f} W limit", *info->power_limit_w);
          high_power =
              *st.last_power_w >= high_power_fraction_ * *info->power_limit_w;
        }
      }
      parts.push_back(last);
    }
    if (!st.answered_again.empty())
      parts.push_back(fmt::format("it answered again from {} ({} samples)",
                                  format_time(st.answered_again.first),
                                  st.answered_again.count));
    f.evidence = fmt::format("{}", fmt::join(parts, "; "));
    f.start = start;
    f.end = end;

    f.action =
        "Drain the node and reboot it: a GPU that fell off the bus does not "
        "come back without a reset or power cycle. Before that, save the "
        "kernel log (PCIe AER errors such as 'Surprise Down') and the BMC "
        "event log.";
    if (hot)
      f.action +=
          " It was at its thermal limit just before: check fans, "
          "airflow and inlet temperature.";
    if (high_power)
      f.action +=
          " It was drawing near its power limit just before: check "
          "the power supplies and the GPU's power cables.";
    f.action +=
        " If it happens again, reseat the card, update the system "
        "BIOS and driver, and contact the vendor (RMA).";
    return f;
  }

  const TraceHeader* header_ = nullptr;
  double hot_margin_c_ = kHotMarginC;
  double high_power_fraction_ = kHighPowerFraction;
  size_t min_lost_samples_ = static_cast<size_t>(kMinLostSamples);
  std::map<int, State> gpus_;  // bounded by the number of GPUs
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_gpu_lost_rule() {
  return std::make_unique<GpuLostRule>();
}

}  // namespace gd
