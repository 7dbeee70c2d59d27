// cpu-contention: the host's CPUs are saturated by OTHER work (or stolen by
// a hypervisor) while a GPU job runs slow. When the saturation is the GPU
// job's own pipeline (the GPU process and its descendants), that is
// input-bound, not this.
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

constexpr const char* kId = "cpu-contention";

// 90% of all CPUs busy leaves too little headroom for a job's bursts
// (launching kernels, collating batches) to be scheduled promptly.
constexpr double kSaturatedPct = 90;
// At least half the busy CPUs go to processes outside every GPU job.
constexpr double kMinOtherShare = 0.5;
// Steal of 10% means the hypervisor gives a tenth of our CPU time away.
constexpr double kStealPct = 10;
// A GPU job under 70% utilisation is running below what it could.
constexpr double kSlowUtilPct = 70;
// Contended in a fifth of the samples where a GPU job ran.
constexpr double kMinFraction = 0.2;
constexpr double kMinSamples = 30;
constexpr size_t kTopOffenders = 3;
// A process that used under a tenth of a CPU while listed is not what
// saturates the host; naming it would send the user after a bystander.
constexpr double kMinNamedCpuPct = 10;

class CpuContentionRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader& header, const Config& config) override {
    cpu_count_ = header.host.cpu_count;
    auto th = [&](const char* name, double def) {
      return workload::threshold(config, kId, name, def);
    };
    saturated_pct_ = th("saturated_pct", kSaturatedPct);
    min_other_share_ = th("min_other_share", kMinOtherShare);
    steal_pct_ = th("steal_pct", kStealPct);
    slow_util_pct_ = th("slow_util_pct", kSlowUtilPct);
    min_fraction_ = th("min_fraction", kMinFraction);
    min_samples_ = th("min_samples", kMinSamples);
  }

  void observe(const Sample& s, const SampleContext& ctx) override {
    process_lists_.add(s);
    const std::vector<GpuJob>& jobs = ctx.gpu_jobs(100);
    double job_cores = 0;
    std::vector<int> slow_gpus;
    std::vector<uint32_t> slow_pids;
    bool any = false;
    for (const GpuJob& job : jobs) {
      if (!job.visible) continue;
      job_cores += job.cpu_pct / 100;
      for (int gi : job.gpus)
        for (const GpuSample& g : s.gpus) {
          if (g.index != gi || !workload::readable(g) || !g.util_pct) continue;
          any = true;
          if (*g.util_pct < slow_util_pct_) {
            slow_gpus.push_back(gi);
            if (std::find(slow_pids.begin(), slow_pids.end(), job.pid) ==
                slow_pids.end())
              slow_pids.push_back(job.pid);
            gpu_util_.add(*g.util_pct);
          }
        }
    }
    if (!any) return;
    ++tracked_;
    if (slow_gpus.empty()) return;

    bool saturated_by_others = false;
    double other_cores = 0;
    if (s.host.cpu_util_pct && cpu_count_) {
      double busy = *s.host.cpu_util_pct / 100 * *cpu_count_;
      other_cores = std::max(0.0, busy - job_cores);
      saturated_by_others = *s.host.cpu_util_pct >= saturated_pct_ &&
                            busy > 0 && other_cores / busy >= min_other_share_;
    }
    bool stolen = s.host.cpu_steal_pct && *s.host.cpu_steal_pct >= steal_pct_;
    if (!saturated_by_others && !stolen) return;

    hit_.add(s.t);
    if (stolen) ++stolen_count_;
    if (s.host.cpu_util_pct) host_util_.add(*s.host.cpu_util_pct);
    if (s.host.cpu_steal_pct) steal_.add(*s.host.cpu_steal_pct);
    other_cores_.add(other_cores);
    job_cores_.add(job_cores);
    gpus_.insert(slow_gpus.begin(), slow_gpus.end());
    job_pids_.insert(slow_pids.begin(), slow_pids.end());
    observe_offenders(s, ctx, jobs);
  }

  // Who the other work is: the collector's host.other_cpu_top where the
  // trace has it. processes[] holds the GPU jobs and their ancestors (the
  // shell or launcher that started them, kept to group ranks): never other
  // work, so without the field only a listed process that is neither is
  // named (a hand-written trace may list one).
  void observe_offenders(const Sample& s, const SampleContext& ctx,
                         const std::vector<GpuJob>& jobs) {
    // Built only here: most samples return before.
    std::set<uint32_t> members;
    for (const GpuJob& job : jobs)
      members.insert(job.members.begin(), job.members.end());
    auto in_job = [&](uint32_t pid) {
      if (members.contains(pid)) return true;
      for (const GpuJob& job : jobs)
        if (ctx.tree().is_ancestor(pid, job.pid)) return true;
      return false;
    };
    if (s.host.other_cpu_top) {
      ++looked_;
      for (const OtherCpuProcess& p : *s.host.other_cpu_top) {
        if (in_job(p.pid)) continue;
        Offender& o = offenders_[p.pid];
        o.label.pid = p.pid;
        if (!p.comm.empty()) o.label.name = p.comm;
        if (!p.user.empty()) o.label.user = p.user;
        o.cpu_sum += p.cpu_pct;
        ++o.seen;
      }
      return;
    }
    for (const ProcessSample& p : s.processes) {
      if (!p.cpu_pct || in_job(p.pid)) continue;
      Offender& o = offenders_[p.pid];
      o.label.update(p);
      o.cpu_sum += *p.cpu_pct;
      ++o.seen;
    }
  }

  std::vector<Finding> finish() override {
    if (static_cast<double>(tracked_) < min_samples_ || hit_.empty()) return {};
    double frac =
        static_cast<double>(hit_.count) / static_cast<double>(tracked_);
    if (frac < min_fraction_) return {};

    // Ranked by the CPU time they took over the window; shown with their
    // CPU% while they ran (a list of the busiest 8 per sample names each of
    // many equal processes in only some samples).
    std::vector<std::pair<double, const Offender*>> ranked;
    for (const auto& [pid, o] : offenders_)
      if (o.cpu_sum / static_cast<double>(o.seen) >= kMinNamedCpuPct)
        ranked.emplace_back(o.cpu_sum, &o);
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first
                                : a.second->label.pid < b.second->label.pid;
    });
    const size_t more =
        ranked.size() > kTopOffenders ? ranked.size() - kTopOffenders : 0;
    if (ranked.size() > kTopOffenders) ranked.resize(kTopOffenders);

    Finding f;
    f.id = kId;
    f.severity = "warning";
    f.gpus.assign(gpus_.begin(), gpus_.end());
    std::string top;
    for (const auto& [sum, o] : ranked) {
      f.pids.push_back(o->label.pid);
      top +=
          fmt::format("{}{} {:.0f}%", top.empty() ? "" : ", ", o->label.text(),
                      o->cpu_sum / static_cast<double>(o->seen));
    }
    if (more) top += fmt::format(" and {} more", more);
    // Without the field nothing names the other work: say so rather than
    // leave the user to guess (or blame the job's own launcher).
    if (top.empty() && looked_ < hit_.count)
      top = "which processes is not recorded in this trace";
    for (uint32_t p : job_pids_) f.pids.push_back(p);
    f.start = hit_.first;
    f.end = hit_.last;
    bool mostly_steal = stolen_count_ * 2 > hit_.count;
    f.title = mostly_steal ? "The hypervisor steals CPU time from the GPU job"
                           : "Other processes take the CPUs the GPU job needs";
    std::string steal = steal_.empty()
                            ? ""
                            : fmt::format(", steal {:.0f}% (peak {:.0f}%)",
                                          steal_.mean(), steal_.max);
    f.evidence = fmt::format(
        "in {} of {} samples ({}) GPU {} averaged {:.0f}% util while host CPUs "
        "were {:.0f}% busy{}{}: processes outside the GPU job used ~{:.1f} "
        "CPUs{}, the GPU job only {:.1f}",
        format_fraction(frac), tracked_, format_range(hit_.first, hit_.last),
        join_ints(f.gpus), gpu_util_.mean(), host_util_.mean(),
        cpu_count_ ? fmt::format(" of {} CPUs", *cpu_count_) : "", steal,
        other_cores_.mean(), top.empty() ? "" : " (" + top + ")",
        job_cores_.mean());
    f.action =
        mostly_steal
            ? "The VM's CPUs are given to other tenants: ask for dedicated or "
              "non-overcommitted instances (or a bigger instance type), and "
              "check the host's steal with the cloud provider."
            : fmt::format(
                  "Move the other work off this host, or cap it (renice +19, "
                  "cgroup cpu.max, systemd CPUQuota), or pin the training job "
                  "to "
                  "its own cores (cgroup cpuset, taskset, numactl){}.",
                  ranked.empty()
                      ? ""
                      : fmt::format("; start with {}",
                                    ranked.front().second->label.text()));
    return {f};
  }

  // Kept apart from the judging above: a GPU job seen in fewer samples than
  // min_samples is too little to call the host's load contention.
  std::optional<std::string> not_judged() const override {
    if (auto why = process_lists_.not_judged()) return why;
    if (tracked_ == 0 || static_cast<double>(tracked_) >= min_samples_)
      return std::nullopt;
    return needs_samples("a GPU job at work", min_samples_, tracked_);
  }

 private:
  struct Offender {
    workload::ProcLabel label;
    double cpu_sum = 0;
    size_t seen = 0;  // samples it was listed in
  };
  std::optional<int> cpu_count_;
  double saturated_pct_ = kSaturatedPct, min_other_share_ = kMinOtherShare,
         steal_pct_ = kStealPct, slow_util_pct_ = kSlowUtilPct,
         min_fraction_ = kMinFraction, min_samples_ = kMinSamples;
  size_t tracked_ = 0, stolen_count_ = 0;
  size_t looked_ = 0;  // contended samples with host.other_cpu_top
  Span hit_;
  Stat host_util_, steal_, other_cores_, job_cores_, gpu_util_;
  std::set<int> gpus_;
  std::set<uint32_t> job_pids_;
  std::map<uint32_t, Offender> offenders_;  // per pid outside GPU jobs
  ProcessListsSeen process_lists_;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_cpu_contention_rule() {
  return std::make_unique<CpuContentionRule>();
}

}  // namespace gd
