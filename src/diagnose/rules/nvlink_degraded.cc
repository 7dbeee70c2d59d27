// nvlink-degraded: an NVLink the GPU has is down while other links are up,
// or its error counters (CRC, replay, recovery) keep growing. NCCL then
// routes around the link or retries on it, and every collective of the job
// slows down; a marginal link usually gets worse. A GPU without NVLink, a
// link whose counters carry old errors that no longer grow, and idle links
// are never a finding.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

// Down in at least this many samples, and at least this share of the
// samples where its state was known, while another link was up: a link
// retraining for a moment is not down.
constexpr double kMinDownSamples = 10;
constexpr double kMinDownFraction = 0.5;
// Growth over the window that counts as "keeps growing": an occasional
// replay is the protocol working; hundreds of CRC errors or replays, or any
// link recovery (the link dropped and retrained), are not.
constexpr double kMinCrcErrors = 100;
constexpr double kMinReplays = 100;
constexpr double kMinRecoveries = 1;
// ... and the counters grew in at least this many samples, not one jump.
constexpr double kMinGrowthSamples = 3;
// Link ids beyond this are ignored (no GPU has more links; a hostile trace
// must not grow the state without bound).
constexpr int kMaxLinkId = 64;

class NvlinkDegradedRule : public Rule {
 public:
  const char* id() const override { return "nvlink-degraded"; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    min_down_samples_ =
        config.get("nvlink-degraded.min_down_samples", kMinDownSamples);
    min_down_fraction_ =
        config.get("nvlink-degraded.min_down_fraction", kMinDownFraction);
    min_crc_ =
        config.get("nvlink-degraded.min_crc_errors_count", kMinCrcErrors);
    min_replays_ = config.get("nvlink-degraded.min_replays_count", kMinReplays);
    min_recoveries_ =
        config.get("nvlink-degraded.min_recoveries_count", kMinRecoveries);
    min_growth_samples_ =
        config.get("nvlink-degraded.min_growth_samples", kMinGrowthSamples);
  }

  void observe(const Sample& s, const SampleContext&) override {
    // Is any link of the host up in this sample? (A link is only "down
    // while its peers are up" if some link is.)
    bool any_up = false;
    for (const auto& g : s.gpus)
      if (!g.lost && !g.stale && g.nvlinks)
        for (const NvLink& l : *g.nvlinks) any_up |= l.active.value_or(false);
    last_t_ = s.t;
    for (const auto& g : s.gpus) {
      if (g.lost || g.stale || !g.nvlinks) continue;
      with_links_.insert(g.index);
      for (const NvLink& l : *g.nvlinks) {
        if (l.link < 0 || l.link >= kMaxLinkId) continue;
        LinkState& st = links_[{g.index, l.link}];
        if (l.active) {
          ++st.state_known;
          if (!*l.active && any_up) st.down.add(s.t);
        }
        if (l.crc_errors_total || l.replay_total || l.recovery_total)
          st.counted.add(s.t);
        bool grew = false;
        grew |= track(st.crc, l.crc_errors_total);
        grew |= track(st.replay, l.replay_total);
        grew |= track(st.recovery, l.recovery_total);
        if (grew) st.growth.add(s.t);
      }
    }
  }

  std::vector<Finding> finish() override {
    std::map<int, std::vector<std::pair<int, const LinkState*>>> bad;
    for (const auto& [key, st] : links_)
      if (is_down(st) || is_erroring(st))
        bad[key.first].push_back({key.second, &st});
    std::vector<Finding> out;
    for (const auto& [gpu, links] : bad)
      out.push_back(make_finding(gpu, links));
    return out;
  }

  // A GPU that has links (the header says how many) but whose link state
  // the driver never gave cannot be judged; nor can a link that went down
  // too shortly before the window ended to tell from a retrain.
  std::optional<std::string> not_judged() const override {
    for (const GpuInfo& info : header_->gpus)
      if (info.nvlink_count.value_or(0) > 0 && !with_links_.count(info.index))
        return fmt::format(
            "needs the state of {}'s {} NVLinks; the driver gave none",
            gpu_label(*header_, info.index), *info.nvlink_count);
    size_t most = 0;
    for (const auto& [key, st] : links_)
      if (!is_down(st) && st.down.count > 0 && st.down.last == last_t_)
        most = std::max(most, st.down.count);
    if (most == 0) return std::nullopt;
    return needs_samples("a link down while its peers are up",
                         min_down_samples_, most);
  }

 private:
  // A cumulative counter: growth since the first reading (a drop means
  // the driver reset it: counting starts again from there).
  struct Counter {
    opt<uint64_t> last;
    uint64_t growth = 0;
  };
  struct LinkState {
    size_t state_known = 0;
    Span down;
    Counter crc, replay, recovery;
    Span counted;  // samples with a counter reading
    Span growth;   // samples in which some counter grew
  };

  static bool track(Counter& c, const opt<uint64_t>& v) {
    if (!v) return false;
    bool grew = false;
    if (c.last && *v > *c.last) {
      c.growth += *v - *c.last;
      grew = true;
    }
    c.last = v;
    return grew;
  }

  bool is_down(const LinkState& st) const {
    const double n = static_cast<double>(st.down.count);
    return n >= min_down_samples_ &&
           n >= min_down_fraction_ * static_cast<double>(st.state_known);
  }

  bool is_erroring(const LinkState& st) const {
    const bool enough =
        static_cast<double>(st.crc.growth) >= min_crc_ ||
        static_cast<double>(st.replay.growth) >= min_replays_ ||
        static_cast<double>(st.recovery.growth) >= min_recoveries_;
    return enough &&
           static_cast<double>(st.growth.count) >= min_growth_samples_;
  }

  Finding make_finding(
      int gpu, const std::vector<std::pair<int, const LinkState*>>& links) {
    Finding f;
    f.id = id();
    f.severity = "warning";
    f.gpus = {gpu};
    std::vector<int> down, erroring;
    std::vector<std::string> parts;
    bool first = true;
    for (const auto& [link, st] : links) {
      const Span& when = is_down(*st) ? st->down : st->growth;
      if (first || when.first < f.start) f.start = when.first;
      if (first || when.last > f.end) f.end = when.last;
      first = false;
      if (is_down(*st)) {
        down.push_back(link);
        parts.push_back(fmt::format(
            "link {} down in {} of {} samples while other links were up "
            "({})",
            link, st->down.count, st->state_known,
            format_range(st->down.first, st->down.last)));
      }
      if (is_erroring(*st)) {
        erroring.push_back(link);
        // The rate over the time the counters were watched.
        const double secs = std::max(1.0, st->counted.last - st->counted.first);
        parts.push_back(fmt::format(
            "link {}: +{} CRC errors, +{} replays, +{} recoveries ({:.1f} "
            "CRC errors/s, growing in {} samples, {})",
            link, st->crc.growth, st->replay.growth, st->recovery.growth,
            static_cast<double>(st->crc.growth) / secs, st->growth.count,
            format_range(st->growth.first, st->growth.last)));
      }
    }
    std::string which;
    if (!down.empty())
      which = fmt::format("NVLink {} {} down", join_ints(down),
                          down.size() == 1 ? "is" : "are");
    if (!erroring.empty())
      which += fmt::format("{}NVLink {} {} logging errors",
                           which.empty() ? "" : ", ", join_ints(erroring),
                           erroring.size() == 1 ? "is" : "are");
    f.title = fmt::format("{}: {}", gpu_label(*header_, gpu), which);
    f.evidence = "";
    for (const std::string& p : parts)
      f.evidence += (f.evidence.empty() ? "" : "; ") + p;
    const GpuInfo* info = find_gpu_info(*header_, gpu);
    if (info && info->nvlink_count)
      f.evidence += fmt::format("; the GPU has {} links", *info->nvlink_count);
    f.action = fmt::format(
        "NCCL traffic over this GPU now retries or routes around the link, "
        "slowing every collective of the job. Confirm with `nvidia-smi nvlink "
        "-s -i {0}` (link state) and `nvidia-smi nvlink -e -i {0}` (error "
        "counters); look for NVSwitch SXid and Xid 74 lines in the kernel "
        "log. When the node is drained, reset the GPU (or reboot; NVLinked "
        "GPUs may have to be reset together) and run `dcgmi diag -r 3`; a "
        "link that keeps erroring after that needs its cable/baseboard or "
        "the GPU serviced.",
        gpu);
    return f;
  }

  const TraceHeader* header_ = nullptr;
  double last_t_ = 0;
  std::set<int> with_links_;  // GPUs whose link state some sample gave
  double min_down_samples_ = kMinDownSamples,
         min_down_fraction_ = kMinDownFraction;
  double min_crc_ = kMinCrcErrors, min_replays_ = kMinReplays,
         min_recoveries_ = kMinRecoveries;
  double min_growth_samples_ = kMinGrowthSamples;
  // (GPU, link) -> state; bounded by GPUs x kMaxLinkId.
  std::map<std::pair<int, int>, LinkState> links_;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_nvlink_degraded_rule() {
  return std::make_unique<NvlinkDegradedRule>();
}

}  // namespace gd
