// gpu-shared-contention: several compute processes of different jobs share
// one GPU in the default compute mode, so they time-slice its SMs and
// compete for its memory. Ranks of one job that touch the same GPU count as
// one job; MIG instances and exclusive compute modes are not shared.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"
#include "diagnose/rules/workload_common.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "gpu-shared-contention";

// Shared for half the window: a job that briefly overlaps another's start
// or end is not contention.
constexpr double kMinFraction = 0.5;
constexpr double kMinSamples = 10;
// A week of short jobs on one GPU can be thousands of sharers: the text
// names the first ones, the finding's pids hold them all.
constexpr size_t kMaxNamedSharers = 16;

struct Sharer {
  workload::ProcLabel label;
  size_t samples = 0;
  uint64_t max_bytes = 0;
};

struct PerGpu {
  size_t known = 0;
  Span shared;
  size_t max_jobs = 0;
  Stat util;
  std::map<uint32_t, Sharer> sharers;  // bounded by the GPU's processes
};

class GpuSharedContentionRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = header;
    min_fraction_ =
        workload::threshold(config, kId, "min_fraction", kMinFraction);
    min_samples_ = workload::threshold(config, kId, "min_samples", kMinSamples);
  }

  void observe(const Sample& s, const SampleContext& ctx) override {
    process_lists_.add(s);
    const ProcessTree& tree = ctx.tree();
    // GPU-listed pid -> job group, sorted by pid (the last job listing a
    // pid wins); member scratch, reused every sample.
    group_of_.clear();
    for (const GpuJob& job : ctx.gpu_jobs(100))
      for (uint32_t m : job.members) group_of_.emplace_back(m, job.group);
    std::stable_sort(
        group_of_.begin(), group_of_.end(),
        [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const GpuSample& g : s.gpus) {
      if (!workload::readable(g) || !g.processes || !shareable(g.index))
        continue;
      PerGpu& st = gpus_[g.index];
      ++st.known;
      jobs_.clear();  // the distinct job groups on this GPU
      for (const GpuProcess& gp : *g.processes) {
        if (gp.type.find("compute") == std::string::npos) continue;
        uint32_t job = gp.pid;
        auto it = std::upper_bound(
            group_of_.begin(), group_of_.end(), gp.pid,
            [](uint32_t pid, const auto& e) { return pid < e.first; });
        if (it != group_of_.begin() && std::prev(it)->first == gp.pid)
          job = std::prev(it)->second;
        if (std::find(jobs_.begin(), jobs_.end(), job) == jobs_.end())
          jobs_.push_back(job);
      }
      if (jobs_.size() < 2) continue;
      st.shared.add(s.t);
      st.max_jobs = std::max(st.max_jobs, jobs_.size());
      if (g.util_pct) st.util.add(*g.util_pct);
      for (const GpuProcess& gp : *g.processes) {
        if (gp.type.find("compute") == std::string::npos) continue;
        Sharer& sh = st.sharers[gp.pid];
        sh.label.pid = gp.pid;
        if (const ProcessSample* p = tree.find(gp.pid)) sh.label.update(*p);
        ++sh.samples;
        if (gp.used_bytes)
          sh.max_bytes = std::max(sh.max_bytes, *gp.used_bytes);
      }
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [index, st] : gpus_) {
      if (st.known == 0 || static_cast<double>(st.shared.count) < min_samples_)
        continue;
      double frac =
          static_cast<double>(st.shared.count) / static_cast<double>(st.known);
      if (frac < min_fraction_) continue;
      Finding f;
      f.id = kId;
      f.severity = "info";
      f.gpus = {index};
      std::string who;
      for (const auto& [pid, sh] : st.sharers) {
        f.pids.push_back(pid);
        if (f.pids.size() <= kMaxNamedSharers)
          who +=
              fmt::format("{}{} {} ({} samples)", who.empty() ? "" : ", ",
                          sh.label.text(), gib_text(sh.max_bytes), sh.samples);
      }
      if (f.pids.size() > kMaxNamedSharers)
        who += fmt::format(" and {} more (--json lists every pid)",
                           f.pids.size() - kMaxNamedSharers);
      f.start = st.shared.first;
      f.end = st.shared.last;
      const GpuInfo* info = find_gpu_info(header_, index);
      std::string mode =
          info && !info->compute_mode.empty() ? info->compute_mode : "unknown";
      f.title = fmt::format("GPU {} is shared by {} jobs", index, st.max_jobs);
      f.evidence = fmt::format(
          "GPU {} (compute mode {}) ran compute processes of {} different jobs "
          "at once in {} of {} samples ({}); util {:.0f}% meanwhile; "
          "processes: {}",
          index, mode, st.max_jobs, format_fraction(frac), st.known,
          format_range(st.shared.first, st.shared.last), st.util.mean(), who);
      f.action = fmt::format(
          "These processes time-slice GPU {} and compete for its memory, so "
          "each "
          "runs slower than alone. Give each job its own GPU "
          "(CUDA_VISIBLE_DEVICES or the scheduler's GPU allocation); enforce "
          "it "
          "with compute mode EXCLUSIVE_PROCESS (nvidia-smi -i {} -c "
          "EXCLUSIVE_PROCESS); for intended sharing use MPS or MIG.",
          index, index);
      out.push_back(std::move(f));
    }
    return out;
  }

  // Processes seen sharing a GPU, but in too few samples.
  std::optional<std::string> not_judged() const override {
    if (auto why = process_lists_.not_judged()) return why;
    size_t most = 0;
    for (const auto& [index, st] : gpus_)
      if (st.shared.count > 0 &&
          static_cast<double>(st.shared.count) < min_samples_)
        most = std::max(most, st.shared.count);
    if (most == 0) return std::nullopt;
    return needs_samples("a shared GPU", min_samples_, most);
  }

 private:
  // Default compute mode (or unknown, which is most likely the default),
  // and not split into MIG instances.
  bool shareable(int index) const {
    const GpuInfo* info = find_gpu_info(header_, index);
    if (!info) return true;
    if (info->mig_enabled.value_or(false)) return false;
    return info->compute_mode.empty() || info->compute_mode == "default";
  }

  TraceHeader header_;
  double min_fraction_ = kMinFraction, min_samples_ = kMinSamples;
  std::map<int, PerGpu> gpus_;
  // observe()'s scratch, kept so a sample costs no allocation.
  std::vector<std::pair<uint32_t, uint32_t>> group_of_;
  std::vector<uint32_t> jobs_;
  ProcessListsSeen process_lists_;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_gpu_shared_contention_rule() {
  return std::make_unique<GpuSharedContentionRule>();
}

}  // namespace gd
