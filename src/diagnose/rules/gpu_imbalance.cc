// gpu-imbalance: in a multi-GPU job (ranks under one launcher -- torchrun,
// mpirun, deepspeed, accelerate, srun, torch.distributed.run -- or one
// common non-shell parent, or one process driving several GPUs) some GPUs
// are much busier than others. Synchronous training then runs at the pace
// of the slowest rank while the others wait.
// Silent for single-GPU jobs and for GPUs of unrelated jobs.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"
#include "diagnose/rules/workload_common.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "gpu-imbalance";

// 40 points between the busiest and the idlest GPU: beyond run-to-run noise
// and per-rank jitter (a few points) of a balanced job.
constexpr double kMinGapPct = 40;
// ...and the idlest does at most half the work of the busiest.
constexpr double kMaxRatio = 0.5;
// The busiest GPU must really work: two near-idle GPUs are not imbalanced.
constexpr double kMinBusiestPct = 50;
// Enough samples for a stable mean per GPU.
constexpr double kMinSamples = 30;

struct PerGroup {
  workload::ProcLabel launcher;
  std::set<uint32_t> ranks;  // root GPU pids seen in the group
  std::map<int, Stat> util;  // per GPU of the group
  std::set<int> ever;        // every GPU the group was seen on
  Span seen;
  size_t skipped = 0;  // samples with one of them lost/stale
};

// A GPU that does not answer (lost, or a read past its deadline).
bool unreadable(const Sample& s, int index) {
  for (const GpuSample& g : s.gpus)
    if (g.index == index) return !workload::readable(g);
  return false;
}

class GpuImbalanceRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader&, const Config& config) override {
    auto th = [&](const char* name, double def) {
      return workload::threshold(config, kId, name, def);
    };
    min_gap_ = th("min_gap_pct", kMinGapPct);
    max_ratio_ = th("max_ratio", kMaxRatio);
    min_busiest_ = th("min_busiest_pct", kMinBusiestPct);
    min_samples_ = th("min_samples", kMinSamples);
  }

  void observe(const Sample& s, const SampleContext& ctx) override {
    process_lists_.add(s);
    const ProcessTree& tree = ctx.tree();
    std::map<uint32_t, std::pair<std::set<int>, std::vector<uint32_t>>> groups;
    for (const GpuJob& job : ctx.gpu_jobs(100)) {
      auto& [gpus, pids] = groups[job.group];
      gpus.insert(job.gpus.begin(), job.gpus.end());
      pids.push_back(job.pid);
    }
    for (const auto& [group, members] : groups) {
      const auto& [gpus, pids] = members;
      if (gpus.size() < 2) continue;
      PerGroup& st = groups_[group];
      st.launcher.pid = group;
      if (const ProcessSample* p = tree.find(group)) st.launcher.update(*p);
      st.ranks.insert(pids.begin(), pids.end());
      st.ever.insert(gpus.begin(), gpus.end());
      // Once a GPU of the job is lost the others wait for it: their idling
      // is a consequence (gpu-lost), not an uneven split of work. Compare
      // only samples where every GPU the job ever used answered.
      if (std::any_of(st.ever.begin(), st.ever.end(),
                      [&](int gi) { return unreadable(s, gi); })) {
        ++st.skipped;
        continue;
      }
      st.seen.add(s.t);
      for (const GpuSample& g : s.gpus)
        if (gpus.contains(g.index) && workload::readable(g) && g.util_pct)
          st.util[g.index].add(*g.util_pct);
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [group, st] : groups_) {
      std::vector<std::pair<int, double>> means;
      for (const auto& [gpu, stat] : st.util)
        if (static_cast<double>(stat.n) >= min_samples_)
          means.emplace_back(gpu, stat.mean());
      if (means.size() < 2) continue;
      auto [lo, hi] = std::minmax_element(
          means.begin(), means.end(),
          [](const auto& a, const auto& b) { return a.second < b.second; });
      double gap = hi->second - lo->second;
      if (hi->second < min_busiest_ || gap < min_gap_ ||
          lo->second > max_ratio_ * hi->second)
        continue;

      Finding f;
      f.id = kId;
      f.severity = "warning";
      std::string per_gpu;
      std::vector<int> idle;
      for (const auto& [gpu, mean] : means) {
        f.gpus.push_back(gpu);
        per_gpu += fmt::format("{}GPU {} {:.0f}%", per_gpu.empty() ? "" : ", ",
                               gpu, mean);
        if (mean < hi->second - gap / 2) idle.push_back(gpu);
      }
      f.pids.push_back(group);
      for (uint32_t r : st.ranks)
        if (r != group) f.pids.push_back(r);
      f.start = st.seen.first;
      f.end = st.seen.last;
      f.title = fmt::format("GPUs of the job under {} are unevenly loaded",
                            st.launcher.text());
      f.evidence = fmt::format(
          "job under {} ({} ranks) on GPUs {}: mean util {} ({}); busiest GPU "
          "{} "
          "at {:.0f}%, idlest GPU {} at {:.0f}% ({:.0f} points apart)",
          st.launcher.text(), st.ranks.size(), join_ints(f.gpus), per_gpu,
          format_range(st.seen.first, st.seen.last), hi->first, hi->second,
          lo->first, lo->second, gap);
      f.action = fmt::format(
          "GPU {} carries more work than GPU {}, and synchronous steps wait "
          "for "
          "it. Look for extra work on that rank (logging, metrics, evaluation "
          "or "
          "checkpointing done only on rank 0, or torch.nn.DataParallel "
          "gathering outputs on one GPU -- use DistributedDataParallel), "
          "uneven "
          "data sharding (DistributedSampler, variable-length batches: bucket "
          "by "
          "length), or an unbalanced pipeline/model-parallel split. Profile "
          "the "
          "busiest and an idle rank (torch.profiler) to compare their steps.",
          hi->first, join_ints(idle));
      out.push_back(std::move(f));
    }
    return out;
  }

  // A multi-GPU job whose GPUs were seen, but too few times to compare.
  std::optional<std::string> not_judged() const override {
    if (auto why = process_lists_.not_judged()) return why;
    size_t most = 0;
    bool short_job = false;
    for (const auto& [group, st] : groups_) {
      size_t judged = 0, seen = 0, n = 0;
      for (const auto& [gpu, stat] : st.util) {
        ++seen;
        n = std::max(n, stat.n);
        if (static_cast<double>(stat.n) >= min_samples_) ++judged;
      }
      if (seen >= 2 && judged < 2) {
        short_job = true;
        most = std::max(most, n);
      }
    }
    if (!short_job) return std::nullopt;
    return needs_samples("each GPU of a multi-GPU job", min_samples_, most);
  }

 private:
  double min_gap_ = kMinGapPct, max_ratio_ = kMaxRatio,
         min_busiest_ = kMinBusiestPct, min_samples_ = kMinSamples;
  std::map<uint32_t, PerGroup> groups_;  // keyed by launcher / group pid
  ProcessListsSeen process_lists_;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_gpu_imbalance_rule() {
  return std::make_unique<GpuImbalanceRule>();
}

}  // namespace gd
