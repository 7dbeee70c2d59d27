// memory-leak: one process's GPU memory grows for the whole window at a
// steady rate. Per (GPU, pid) we keep a streaming least-squares fit of
// used_bytes over time (sums only) plus measures that separate a leak from
// the look-alikes:
//   - a caching allocator that fills its pool and then holds it flat: the
//     fit explains little (low R^2) and growth stops early;
//   - memory that is freed and re-grabbed (sawtooth): it falls far below
//     its running peak;
//   - a one-time step up (a bigger batch, an eval model loaded): one jump
//     carries most of the growth, and a single step never reaches R^2 0.75.
// A leak fast enough to fill the GPU within minutes cannot wait for the
// five-minute window: once its rise is clean over enough samples (the same
// fit and shape tests), it is reported with its time to full.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"
#include "diagnose/rules/workload_common.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "memory-leak";
using workload::kMiB;

// A leak has to be told from warm-up; five minutes of steady growth is the
// least that says "keeps growing" rather than "is still starting".
constexpr double kMinWindowS = 300;
// The process must be there for most of the window: growth of a process
// that only lived briefly is its start-up.
constexpr double kMinCoverage = 0.8;
// Slower than this, allocator rounding and fragmentation drift look the same
// (and an 80 GiB card would last ~4 weeks).
constexpr double kMinRateMiBPerMin = 2.0;
// Total growth below one large allocator segment churn is not a finding.
constexpr double kMinGrowthMiB = 256;
// A straight line must explain the curve: a single step up reaches at most
// R^2 = 0.75 (3p(1-p) for a step at fraction p of the window).
constexpr double kMinR2 = 0.9;
// A leak never gives its memory back: the deepest fall below the running
// peak stays a small share of the growth. Allocator churn (a segment taken
// and returned within a step or two) is tiny against the growth; a process
// that frees and re-grabs its pool (sawtooth, periodic empty_cache) falls
// back by most of it.
constexpr double kMaxDrawdownShare = 0.2;
// No single jump may carry more than this share of the growth (a step is 1).
constexpr double kMaxJumpShare = 0.25;
// Increases must be spread over the process's life, not bunched at the start.
constexpr double kMinRiseSpread = 0.6;
// A fast leak is judged before the window is long: ten samples are the
// fewest on which R^2 0.9 and the shape tests tell a steady rise from a
// step or two (a one-step rise reaches at most 0.75 at any length).
constexpr double kMinFastSamples = 10;
// At its rate the GPU is full within this: too soon to wait five minutes.
constexpr double kFastFullWithinS = 15 * 60;
// ...and within this the job dies before anyone reads a warning.
constexpr double kCriticalFullWithinS = 5 * 60;

struct Fit {
  // x: seconds since the pid's first sample; y: MiB above its first value.
  size_t n = 0;
  double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0;
  void add(double x, double y) {
    ++n;
    sx += x, sy += y, sxx += x * x, sxy += x * y, syy += y * y;
  }
  double slope() const {
    double d = static_cast<double>(n) * sxx - sx * sx;
    return d > 0 ? (static_cast<double>(n) * sxy - sx * sy) / d : 0;
  }
  double r2() const {
    double dn = static_cast<double>(n);
    double vx = dn * sxx - sx * sx, vy = dn * syy - sy * sy;
    if (vx <= 0 || vy <= 0) return 0;
    double c = dn * sxy - sx * sy;
    return c * c / (vx * vy);
  }
};

struct PerProc {
  Fit fit;
  double first_t = 0, last_t = 0;
  double first_mib = 0, last_mib = 0;
  double peak = 0, max_drawdown = 0, max_jump = 0;
  double first_rise_t = -1, last_rise_t = -1;
};

class MemoryLeakRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = header;
    auto th = [&](const char* name, double def) {
      return workload::threshold(config, kId, name, def);
    };
    min_window_s_ = th("min_window_s", kMinWindowS);
    min_coverage_ = th("min_coverage", kMinCoverage);
    min_rate_ = th("min_rate_mib_per_min", kMinRateMiBPerMin);
    min_growth_ = th("min_growth_mib", kMinGrowthMiB);
    min_r2_ = th("min_r2", kMinR2);
    max_drawdown_share_ = th("max_drawdown_share", kMaxDrawdownShare);
    max_jump_share_ = th("max_jump_share", kMaxJumpShare);
    min_rise_spread_ = th("min_rise_spread", kMinRiseSpread);
    min_fast_samples_ = th("min_fast_samples", kMinFastSamples);
    fast_full_within_s_ = th("fast_full_within_s", kFastFullWithinS);
    critical_full_within_s_ =
        th("critical_full_within_s", kCriticalFullWithinS);
  }

  void observe(const Sample& s, const SampleContext&) override {
    process_lists_.add(s);
    window_.add(s.t);
    for (const GpuSample& g : s.gpus) {
      if (!workload::readable(g)) continue;
      if (g.mem_used_bytes) last_used_[g.index] = *g.mem_used_bytes;
      if (g.mem_used_bytes && !g.processes) ++no_process_list_;
      if (!g.processes) continue;
      for (const GpuProcess& gp : *g.processes) {
        if (!gp.used_bytes) continue;
        double mib = static_cast<double>(*gp.used_bytes) / kMiB;
        auto [it, fresh] = procs_.try_emplace({g.index, gp.pid});
        PerProc& p = it->second;
        if (fresh) {
          seen_procs_ = true;
          labels_[gp.pid].pid = gp.pid;
          p.first_t = s.t;
          p.first_mib = mib;
          p.peak = mib;
        } else {
          double d = mib - p.last_mib;
          if (d > 0) {
            p.max_jump = std::max(p.max_jump, d);
            if (p.first_rise_t < 0) p.first_rise_t = s.t;
            p.last_rise_t = s.t;
          }
          p.peak = std::max(p.peak, mib);
          p.max_drawdown = std::max(p.max_drawdown, p.peak - mib);
        }
        p.last_t = s.t;
        p.last_mib = mib;
        p.fit.add(s.t - p.first_t, mib - p.first_mib);
      }
    }
    // Names for evidence, only of pids that hold GPU memory (bounded).
    for (const ProcessSample& ps : s.processes) {
      auto it = labels_.find(ps.pid);
      if (it != labels_.end()) it->second.update(ps);
    }
    if (sweep_.due()) sweep(s.t);
  }

  // A process that ended covering less than min_coverage of the window
  // never will: the window only grows.
  void sweep(double now) {
    workload::sweep_ended(
        procs_, now, [](const PerProc& p) { return p.last_t; },
        [&](const auto&, const PerProc& p) {
          return p.last_t - p.first_t < min_coverage_ * window_.span();
        });
    std::set<uint32_t> kept;
    for (const auto& [key, p] : procs_) kept.insert(key.second);
    std::erase_if(labels_,
                  [&](const auto& l) { return !kept.contains(l.first); });
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    const bool long_window = window_.span() >= min_window_s_;
    for (auto& [key, p] : procs_) {
      auto [gpu, pid] = key;
      double span = p.last_t - p.first_t;
      if (span < min_coverage_ * window_.span() || p.fit.n < 3) continue;
      double rate = p.fit.slope() * 60;  // MiB per minute
      auto full_in_s = seconds_to_full(gpu, rate);
      const bool fast = static_cast<double>(p.fit.n) >= min_fast_samples_ &&
                        full_in_s && *full_in_s <= fast_full_within_s_;
      if (!long_window && !fast) continue;
      double growth = p.last_mib - p.first_mib;
      if (rate < min_rate_ || growth < min_growth_) continue;
      double r2 = p.fit.r2();
      if (r2 < min_r2_) continue;
      double drawdown = p.max_drawdown / growth;
      if (drawdown > max_drawdown_share_) continue;
      double jump_share = p.max_jump / growth;
      if (jump_share > max_jump_share_) continue;
      double spread = (p.last_rise_t - p.first_rise_t) / span;
      if (spread < min_rise_spread_) continue;

      const workload::ProcLabel& label = labels_[pid];

      std::string exhaustion =
          "time to exhaustion unknown (GPU total not reported)";
      if (full_in_s) {
        uint64_t total = *find_gpu_info(header_, gpu)->memory_total_bytes;
        exhaustion = fmt::format(
            "{} free of {} -> full in about {} at this rate",
            gib_text(static_cast<uint64_t>(*full_in_s / 60 * rate * kMiB)),
            gib_text(total), elapsed_words(*full_in_s));
      }

      Finding f;
      f.id = kId;
      f.severity = full_in_s && *full_in_s <= critical_full_within_s_
                       ? "critical"
                       : "warning";
      f.gpus = {gpu};
      f.pids = {pid};
      f.title = fmt::format("{} leaks GPU {} memory at {:.1f} MiB/min",
                            label.text(), gpu, rate);
      if (fast)
        f.title += fmt::format(": full in about {}", elapsed_words(*full_in_s));
      f.start = p.first_t;
      f.end = p.last_t;
      f.evidence = fmt::format(
          "GPU {} memory of {} grew from {} to {} over {} ({}): a steady "
          "{:.1f} MiB/min (linear fit R^2 {:.2f}; never more than {:.0f} MiB "
          "below its running peak; largest single jump {} of the growth); {}",
          gpu, label.text(),
          gib_text(static_cast<uint64_t>(p.first_mib * kMiB)),
          gib_text(static_cast<uint64_t>(p.last_mib * kMiB)),
          elapsed_words(span), format_range(p.first_t, p.last_t), rate, r2,
          p.max_drawdown, format_fraction(jump_share), exhaustion);
      f.action = fmt::format(
          "Find what {} keeps alive on the GPU: tensors appended to a list or "
          "dict every step (e.g. accumulating loss instead of loss.item()), a "
          "cache keyed by step or shape, graphs kept by retain_graph=True. "
          "Compare torch.cuda.memory_summary() or a memory snapshot "
          "(torch.cuda.memory._record_memory_history) a few hundred steps "
          "apart; until fixed, restart the job before it runs out.",
          label.text());
      out.push_back(std::move(f));
    }
    return out;
  }

  std::optional<std::string> not_judged() const override {
    if (auto why = process_lists_.not_judged()) return why;
    if (!seen_procs_ && no_process_list_ > 0)
      return "needs each process's GPU memory; the driver reported only the "
             "GPU's total in " +
             std::to_string(no_process_list_) + " readings";
    if (seen_procs_ && window_.span() < min_window_s_)
      return "a slow leak " +
             needs_time("one process's GPU memory", min_window_s_,
                        window_.span()) +
             " (only one that fills the GPU within " +
             elapsed_words(fast_full_within_s_) + " is judged sooner)";
    return std::nullopt;
  }

 private:
  // Seconds until the GPU is full at `rate_mib_per_min`, from its last
  // reading; nullopt when its total or use is unknown or it does not grow.
  std::optional<double> seconds_to_full(int gpu,
                                        double rate_mib_per_min) const {
    const GpuInfo* info = find_gpu_info(header_, gpu);
    auto used = last_used_.find(gpu);
    if (!info || !info->memory_total_bytes || used == last_used_.end() ||
        !(rate_mib_per_min > 0))
      return std::nullopt;
    double free_mib = (static_cast<double>(*info->memory_total_bytes) -
                       static_cast<double>(
                           std::min(used->second, *info->memory_total_bytes))) /
                      kMiB;
    return free_mib / rate_mib_per_min * 60;
  }

  TraceHeader header_;
  workload::Window window_;
  double min_window_s_ = kMinWindowS, min_coverage_ = kMinCoverage,
         min_rate_ = kMinRateMiBPerMin, min_growth_ = kMinGrowthMiB,
         min_r2_ = kMinR2, max_drawdown_share_ = kMaxDrawdownShare,
         max_jump_share_ = kMaxJumpShare, min_rise_spread_ = kMinRiseSpread,
         min_fast_samples_ = kMinFastSamples,
         fast_full_within_s_ = kFastFullWithinS,
         critical_full_within_s_ = kCriticalFullWithinS;
  size_t no_process_list_ = 0;  // GPU readings without a process list
  bool seen_procs_ = false;     // any process's GPU memory, swept or not
  std::map<std::pair<int, uint32_t>, PerProc> procs_;
  std::map<uint32_t, workload::ProcLabel> labels_;
  std::map<int, uint64_t> last_used_;
  ProcessListsSeen process_lists_;
  workload::EndedSweep sweep_;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_memory_leak_rule() {
  return std::make_unique<MemoryLeakRule>();
}

}  // namespace gd
