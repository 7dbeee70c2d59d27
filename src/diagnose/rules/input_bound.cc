// input-bound: the GPU keeps going idle (utilisation low, or oscillating as
// it waits for the next batch) while the CPU side of the same job -- the GPU
// process and its descendants, e.g. DataLoader workers -- is saturated. The
// input pipeline cannot keep up. Two shapes of "keeps going idle":
//  - starved: util falls below ~30% in a good share of the samples;
//  - oscillating: util swings in a regular cycle between full (~100%) and a
//    shallow trough (~50-70%), the GPU waiting part of every few steps (a
//    real 8-GPU case ran 60-100% with 4 workers per GPU; more workers fixed
//    it). The swings must be regular and the workers saturated in the
//    troughs: a GPU that drops to 60% for an eval phase while its loaders
//    sleep is not input-bound.
// Silent when the waiting samples are spent waiting on disk (that is
// io-bound) and, by construction, when no process uses the GPU.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"
#include "diagnose/rules/util_cycle.h"
#include "diagnose/rules/workload_common.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "input-bound";

// Below 30% the GPU spends most of the interval waiting: a step that is
// compute-bound keeps utilisation far above that.
constexpr double kStarvedUtilPct = 30;
// Starved in a fifth of the samples: an oscillation with a 1-in-5 idle phase
// already costs ~20% of throughput.
constexpr double kMinStarvedFraction = 0.2;
// A data-loader worker at 85%+ of a core is busy all the time (the rest is
// scheduling and IPC). A worker found runnable (state R) counts too: it
// wants the CPU all the time and gets less only because the CPUs are
// contended (cpu-contention then says by whom). A worker that waits for
// the GPU to take its batch sleeps (S), one that waits on disk is in D.
constexpr double kWorkerSaturatedPct = 85;
// Most workers must be saturated, not one straggler.
constexpr double kMinSaturatedWorkers = 0.75;
// With no workers the main process does the loading itself; one core
// pegged by Python (GIL) is its limit.
constexpr double kMainSaturatedPct = 95;
// The job must be saturated in most starved samples.
constexpr double kMinSaturatedShare = 0.6;
// iowait at 10%+ of all CPUs means the loaders wait on storage (io-bound);
// if half of the starved samples look like that, this rule steps aside.
constexpr double kIowaitPct = 10;
constexpr double kMaxIowaitShare = 0.5;
// Fewer samples than this cannot show "keeps going idle": 10 samples hold
// at least two starved ones (min_starved_fraction), e.g. 2 cycles of a 5 s
// loader stall in a 10 s window at 500 ms.
constexpr double kMinSamples = 10;

// The oscillating shape. A fed GPU stays at 90-100% (the healthy baseline);
// a sample below 75% means it waited a quarter of that interval or more.
constexpr double kDipUtilPct = 75;
// At 90%+ it was fed for the whole interval: the swing is back at the top.
// The gap between the two marks keeps noise around one of them from
// counting as a swing.
constexpr double kPeakUtilPct = 90;
// Troughs in a fifth of the samples: at ~60% each, ~8% of the throughput
// is lost, which a few more workers win back.
constexpr double kMinDipFraction = 0.2;
// Five full swings make a pattern, not an incident (a checkpoint, one
// validation pass).
constexpr double kMinCycleCount = 5;
// A loader that falls behind does so every few batches, so the period
// barely varies (sampling at 1 Hz rounds a 4.5 s cycle to 4 and 5 s: a
// spread of ~0.1). Swings at random times spread ~1 (exponential gaps).
constexpr double kMaxPeriodSpread = 0.5;

// What the job's CPU side did in the samples where its GPU waited.
struct Waiting {
  size_t samples = 0, saturated = 0, iowait = 0;
  Stat util, worker_cpu, main_cpu, host_cpu, iowait_pct;
  Span hit;  // saturated and not waiting on disk
};

struct PerJob {
  PerJob(double dip, double peak) : cycle(dip, peak) {}
  workload::ProcLabel label;
  uint32_t group = 0;
  std::set<int> gpus;
  size_t samples = 0;
  size_t cycles = 0;  // busy -> starved transitions
  bool was_starved = false;
  Stat busy_util;
  int max_workers = 0;
  Span starved_span;
  Waiting starved;  // util below starved_util_pct
  Waiting dipped;   // util below dip_util_pct (the oscillating shape)
  UtilCycle cycle;
  double last_t = 0;
};

void merge(Stat& into, const Stat& from) {
  if (from.empty()) return;
  into.n += from.n;
  into.sum += from.sum;
  into.min = std::min(into.min, from.min);
  into.max = std::max(into.max, from.max);
}

// The ranks of one job that are input-bound, summed up.
struct Group {
  std::vector<uint32_t> pids;  // in the order added; describe() sorts them
  workload::ProcLabel first;   // the lowest rank pid, to name a single rank
  std::set<int> gpus;
  size_t samples = 0, starved = 0, cycles = 0;
  double cycle_span = 0;  // sum over ranks of (last - first starved time)
  size_t cycle_ranks = 0;
  int workers = 0, max_workers = 0;
  Stat busy_util, starved_util, worker_cpu, main_cpu, host_cpu, iowait;
  Span hit;
  // Ranks that qualify by the oscillating shape only, and their swings.
  size_t oscillating = 0, dipped = 0, swings = 0;
  double period_sum = 0, spread_max = 0;
  Stat troughs, peaks;

  // `by_swing`: the rank qualifies by the oscillating shape, not starved.
  void add(uint32_t pid, const PerJob& st, bool by_swing) {
    if (pids.empty() || pid < first.pid) {
      first = st.label;
      first.pid = pid;
    }
    pids.push_back(pid);
    gpus.insert(st.gpus.begin(), st.gpus.end());
    samples += st.samples;
    starved += st.starved.samples;
    workers += st.max_workers;
    max_workers = std::max(max_workers, st.max_workers);
    if (by_swing) {
      ++oscillating;
      dipped += st.dipped.samples;
      swings += st.cycle.cycles();
      period_sum +=
          st.cycle.period_mean() * static_cast<double>(st.cycle.cycles());
      spread_max = std::max(spread_max, st.cycle.period_spread());
      merge(troughs, st.cycle.troughs());
      merge(peaks, st.cycle.peaks());
    } else {
      if (st.cycles >= 3) {
        cycles += st.cycles - 1;
        cycle_span += st.starved_span.last - st.starved_span.first;
        ++cycle_ranks;
      }
      merge(busy_util, st.busy_util);
      merge(starved_util, st.starved.util);
    }
    const Waiting& w = by_swing ? st.dipped : st.starved;
    merge(worker_cpu, w.worker_cpu);
    merge(main_cpu, w.main_cpu);
    merge(host_cpu, w.host_cpu);
    merge(iowait, w.iowait_pct);
    if (!w.hit.empty()) {
      if (hit.empty()) hit = w.hit;
      hit.first = std::min(hit.first, w.hit.first);
      hit.last = std::max(hit.last, w.hit.last);
      hit.count += w.hit.count;
    }
  }
};

class InputBoundRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader& header, const Config& config) override {
    cpu_count_ = header.host.cpu_count;
    auto th = [&](const char* name, double def) {
      return workload::threshold(config, kId, name, def);
    };
    starved_util_ = th("starved_util_pct", kStarvedUtilPct);
    min_starved_ = th("min_starved_fraction", kMinStarvedFraction);
    worker_saturated_ = th("worker_saturated_pct", kWorkerSaturatedPct);
    min_saturated_workers_ = th("min_saturated_workers", kMinSaturatedWorkers);
    main_saturated_ = th("main_saturated_pct", kMainSaturatedPct);
    min_saturated_share_ = th("min_saturated_share", kMinSaturatedShare);
    iowait_pct_ = th("iowait_pct", kIowaitPct);
    max_iowait_share_ = th("max_iowait_share", kMaxIowaitShare);
    min_samples_ = th("min_samples", kMinSamples);
    dip_util_ = th("dip_util_pct", kDipUtilPct);
    peak_util_ = th("peak_util_pct", kPeakUtilPct);
    min_dip_ = th("min_dip_fraction", kMinDipFraction);
    min_cycles_ = th("min_cycle_count", kMinCycleCount);
    max_period_spread_ = th("max_period_spread", kMaxPeriodSpread);
  }

  void observe(const Sample& s, const SampleContext& ctx) override {
    process_lists_.add(s);
    const ProcessTree& tree = ctx.tree();
    for (const GpuJob& job : ctx.gpu_jobs(worker_saturated_)) {
      if (!job.visible) continue;  // no CPU side to look at
      double util = 0;
      int known = 0;
      for (int gi : job.gpus)
        for (const GpuSample& g : s.gpus)
          if (g.index == gi && workload::readable(g) && g.util_pct)
            util += *g.util_pct, ++known;
      if (known == 0) continue;
      util /= known;

      PerJob& st =
          jobs_.try_emplace(job.pid, dip_util_, peak_util_).first->second;
      if (const ProcessSample* p = tree.find(job.pid)) st.label.update(*p);
      st.group = job.group;
      st.gpus.insert(job.gpus.begin(), job.gpus.end());
      st.max_workers =
          std::max(st.max_workers, static_cast<int>(job.workers.size()));
      ++st.samples;
      st.last_t = s.t;
      st.cycle.add(s.t, util);
      bool starved = util < starved_util_;
      bool dipped = util < dip_util_;
      if (starved) {
        if (!st.was_starved) ++st.cycles;
        st.was_starved = true;
        st.starved_span.add(s.t);
      } else {
        st.busy_util.add(util);
        st.was_starved = false;
      }
      if (starved) note(st.starved, s, job, util);
      if (dipped) note(st.dipped, s, job, util);
    }
    // A job that ended is judged now: its figures cannot change.
    if (sweep_.due())
      workload::sweep_ended(
          jobs_, s.t, [](const PerJob& st) { return st.last_t; },
          [&](uint32_t pid, const PerJob& st) {
            judge(pid, st, decided_);
            return true;
          });
  }

  std::vector<Finding> finish() override {
    // One finding per job group (all DDP ranks of a job together), from the
    // ranks that meet the criteria on their own.
    std::map<uint32_t, Group> groups = decided_;
    for (const auto& [pid, st] : jobs_) judge(pid, st, groups);
    std::vector<Finding> out;
    for (auto& [group, g] : groups) out.push_back(describe(g));
    return out;
  }

  // A GPU job seen waiting on its GPU, but in too few samples.
  std::optional<std::string> not_judged() const override {
    if (auto why = process_lists_.not_judged()) return why;
    size_t most = most_short_;
    for (const auto& [pid, st] : jobs_) most = std::max(most, short_one(st));
    if (most == 0) return std::nullopt;
    return needs_samples("a GPU job", min_samples_, most);
  }

 private:
  // The job's samples when it waited on its GPU in too few of them to be
  // judged; 0 otherwise.
  size_t short_one(const PerJob& st) const {
    return st.samples > 0 && static_cast<double>(st.samples) < min_samples_ &&
                   (st.starved.samples > 0 || st.dipped.samples > 0)
               ? st.samples
               : 0;
  }

  // A job's verdict: into its group of `groups` when it meets the criteria
  // on its own; remembered for not_judged() when it had too few samples.
  void judge(uint32_t pid, const PerJob& st,
             std::map<uint32_t, Group>& groups) {
    most_short_ = std::max(most_short_, short_one(st));
    if (static_cast<double>(st.samples) < min_samples_) return;
    if (waited_on_loader(st, st.starved, min_starved_))
      groups[st.group].add(pid, st, false);
    else if (waited_on_loader(st, st.dipped, min_dip_) &&
             static_cast<double>(st.cycle.cycles()) >= min_cycles_ &&
             st.cycle.period_spread() <= max_period_spread_)
      groups[st.group].add(pid, st, true);
  }

  // One sample in which the GPU waited: was the job's CPU side saturated,
  // and was the host waiting on disk?
  void note(Waiting& w, const Sample& s, const GpuJob& job, double util) const {
    ++w.samples;
    w.util.add(util);
    bool saturated;
    if (job.workers_known > 0) {
      saturated = job.workers_cpu_bound >=
                  std::ceil(min_saturated_workers_ * job.workers_known);
      w.worker_cpu.add(job.workers_cpu_pct / job.workers_known);
    } else {
      saturated = job.main_cpu_pct >= main_saturated_;
    }
    if (job.main_cpu_pct >= 0) w.main_cpu.add(job.main_cpu_pct);
    if (s.host.cpu_util_pct) w.host_cpu.add(*s.host.cpu_util_pct);
    bool io_wait =
        s.host.cpu_iowait_pct && *s.host.cpu_iowait_pct >= iowait_pct_;
    if (s.host.cpu_iowait_pct) w.iowait_pct.add(*s.host.cpu_iowait_pct);
    if (io_wait) ++w.iowait;
    if (saturated && !io_wait) {
      ++w.saturated;
      w.hit.add(s.t);
    }
  }

  // The GPU waited in `min_fraction` of the job's samples, the job's CPU
  // side was saturated in most of them, and the host was not waiting on
  // disk in half of them.
  bool waited_on_loader(const PerJob& st, const Waiting& w,
                        double min_fraction) const {
    if (w.samples == 0) return false;
    double n = static_cast<double>(w.samples);
    double frac = n / static_cast<double>(st.samples);
    return frac >= min_fraction &&
           static_cast<double>(w.saturated) / n >= min_saturated_share_ &&
           static_cast<double>(w.iowait) / n < max_iowait_share_;
  }

  Finding describe(const Group& g) const {
    Finding f;
    f.id = kId;
    f.severity = "warning";
    f.gpus.assign(g.gpus.begin(), g.gpus.end());
    f.pids = g.pids;
    std::sort(f.pids.begin(), f.pids.end());
    f.start = g.hit.first;
    f.end = g.hit.last;
    bool one_gpu = f.gpus.size() == 1;
    f.title =
        one_gpu
            ? fmt::format("GPU {} is held back by its data loader", f.gpus[0])
            : fmt::format("GPUs {} are held back by their data loaders",
                          join_ints(f.gpus));
    std::string gpus = one_gpu ? fmt::format("GPU {}", f.gpus[0])
                               : fmt::format("GPUs {}", join_ints(f.gpus));
    // A group where every rank qualifies by the swings alone is told by its
    // swings; otherwise by its starved samples (over all its ranks).
    std::string shape;
    if (g.oscillating == g.pids.size()) {
      double ranks = static_cast<double>(g.oscillating);
      std::string count =
          g.oscillating == 1
              ? fmt::format("{} cycles", g.swings)
              : fmt::format("~{:.0f} cycles per rank",
                            static_cast<double>(g.swings) / ranks);
      shape = fmt::format(
          "{} util swung between ~{:.0f}% and ~{:.0f}% in a regular ~{:.1f} s "
          "cycle ({}, period ±{:.0f}%), below {:.0f}% in {} of {} {}samples",
          gpus, g.peaks.mean(), g.troughs.mean(),
          g.period_sum / static_cast<double>(g.swings), count,
          100 * g.spread_max, dip_util_,
          format_fraction(static_cast<double>(g.dipped) /
                          static_cast<double>(g.samples)),
          g.samples, one_gpu ? "" : "GPU ");
    } else {
      std::string pattern;
      if (g.cycle_ranks > 0 && g.cycles > 0 && !g.busy_util.empty()) {
        pattern =
            fmt::format("in a ~{:.1f} s cycle between {:.0f}% and {:.0f}%",
                        g.cycle_span / static_cast<double>(g.cycles),
                        g.busy_util.mean(), g.starved_util.mean());
      } else {
        pattern = fmt::format("at {:.0f}% on average while starved",
                              g.starved_util.mean());
      }
      shape =
          fmt::format("{} util fell below {:.0f}% in {} of {} {}samples, {}",
                      gpus, starved_util_,
                      format_fraction(static_cast<double>(g.starved) /
                                      static_cast<double>(g.samples)),
                      g.samples, one_gpu ? "" : "GPU ", pattern);
    }
    std::string who;
    if (g.pids.size() == 1) {
      who =
          g.workers > 0 && !g.worker_cpu.empty()
              ? fmt::format("{} and its {} workers used {:.0f}% CPU each{}",
                            g.first.text(), g.workers, g.worker_cpu.mean(),
                            g.main_cpu.empty()
                                ? ""
                                : fmt::format(" (main process {:.0f}%)",
                                              g.main_cpu.mean()))
              : fmt::format("{} (no worker processes) used {:.0f}% of one CPU",
                            g.first.text(), g.main_cpu.mean());
    } else {
      std::vector<int> pids(f.pids.begin(), f.pids.end());
      who = fmt::format(
          "its {} ranks (pids {}){} used {:.0f}% CPU each{}", g.pids.size(),
          join_ints(pids),
          g.workers > 0 ? fmt::format(" and their {} workers", g.workers) : "",
          g.worker_cpu.empty() ? g.main_cpu.mean() : g.worker_cpu.mean(),
          g.workers > 0 && !g.main_cpu.empty()
              ? fmt::format(" (ranks {:.0f}%)", g.main_cpu.mean())
              : "");
    }
    if (!g.worker_cpu.empty() && g.worker_cpu.mean() < worker_saturated_)
      who +=
          " and were runnable (state R) throughout: CPU-bound, getting less "
          "than a "
          "core because the host's CPUs are contended";
    f.evidence = fmt::format(
        "{}, while {}; host CPUs {:.0f}% busy, iowait {:.1f}% (so not waiting "
        "on disk); {}",
        shape, who, g.host_cpu.mean(), g.iowait.mean(),
        format_range(g.hit.first, g.hit.last));
    f.action = action(g);
    return f;
  }

  std::string action(const Group& st) const {
    std::string more;
    if (cpu_count_ && !st.host_cpu.empty()) {
      double idle_cpus = *cpu_count_ * (1 - st.host_cpu.mean() / 100);
      // The idle CPUs are shared by the job's ranks.
      double ranks = static_cast<double>(std::max<size_t>(1, st.pids.size()));
      if (idle_cpus >= 2 * ranks) {
        more = fmt::format(
            "The host still has ~{:.0f} idle CPUs: raise DataLoader "
            "num_workers "
            "(now {}{}) towards {}.",
            idle_cpus, st.max_workers, st.pids.size() > 1 ? " per rank" : "",
            st.max_workers +
                static_cast<int>(std::min<double>(
                    idle_cpus / ranks, std::max(2, st.max_workers))));
      } else {
        more = fmt::format(
            "The host has no idle CPU ({:.0f}% busy): more workers will not "
            "help; "
            "make each sample cheaper.",
            st.host_cpu.mean());
      }
    } else {
      more =
          fmt::format("Raise DataLoader num_workers (now {}) if CPUs are free.",
                      st.max_workers);
    }
    return more +
           " Use pin_memory=True, persistent_workers=True and a larger "
           "prefetch_factor; move decoding and augmentation to the GPU (NVIDIA "
           "DALI, torchvision.transforms.v2 on CUDA tensors); pre-process or "
           "cache the dataset in a cheaper-to-decode format.";
  }

  std::optional<int> cpu_count_;
  double starved_util_ = kStarvedUtilPct, min_starved_ = kMinStarvedFraction,
         worker_saturated_ = kWorkerSaturatedPct,
         min_saturated_workers_ = kMinSaturatedWorkers,
         main_saturated_ = kMainSaturatedPct,
         min_saturated_share_ = kMinSaturatedShare, iowait_pct_ = kIowaitPct,
         max_iowait_share_ = kMaxIowaitShare, min_samples_ = kMinSamples,
         dip_util_ = kDipUtilPct, peak_util_ = kPeakUtilPct,
         min_dip_ = kMinDipFraction, min_cycles_ = kMinCycleCount,
         max_period_spread_ = kMaxPeriodSpread;
  std::map<uint32_t, PerJob> jobs_;  // per root GPU pid, while it runs
  // The groups of the jobs that ended meeting the criteria (swept), and
  // the most samples of an ended job too short to judge.
  std::map<uint32_t, Group> decided_;
  size_t most_short_ = 0;
  workload::EndedSweep sweep_;
  ProcessListsSeen process_lists_;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_input_bound_rule() {
  return std::make_unique<InputBoundRule>();
}

}  // namespace gd
