// memory-underused: a job holds a GPU for the whole window while its peak
// memory stays under about a quarter of the GPU's and the SMs are far from
// busy. The GPU is reserved for work that would fit a larger batch on it, or
// a smaller GPU or MIG slice. A job whose SMs are busy is compute-bound at
// this batch size (not a finding), and one that holds the GPU only part of
// the window may just be starting or ending.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "common/bytes_text.h"
#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"
#include "diagnose/rules/workload_common.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "memory-underused";

// "About a quarter" of the GPU's memory, peak.
constexpr double kMaxPeakFraction = 0.25;
// "Far from busy": SM activity (GPM) or, without it, util under this.
constexpr double kMaxBusyPct = 50;
// "For the whole window", allowing a stray missed sample.
constexpr double kMinHolderFraction = 0.95;
// A job's first minutes (loading data, warming up) are not its steady use.
constexpr double kMinWindowS = 300;
// At or under this util the GPU is idle: gpu-idle-allocated's case.
constexpr double kIdleUtilPct = 5;
// A process map per GPU cannot grow without bound on a hostile trace.
constexpr size_t kMaxHolders = 64;

struct Holder {
  workload::ProcLabel label;
  size_t samples = 0;
  uint64_t peak_bytes = 0;
};

struct PerGpu {
  workload::Window window;
  Stat busy;  // SM activity where GPM gives it, else util
  Stat util;
  bool busy_is_sm = true;
  uint64_t peak_used = 0;  // the GPU's own used memory (per-process missing)
  std::map<uint32_t, Holder> holders;
};

class MemoryUnderusedRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    auto th = [&](const char* name, double def) {
      return workload::threshold(config, kId, name, def);
    };
    max_peak_fraction_ = th("max_peak_fraction", kMaxPeakFraction);
    max_busy_pct_ = th("max_busy_pct", kMaxBusyPct);
    min_holder_fraction_ = th("min_holder_fraction", kMinHolderFraction);
    min_window_s_ = th("min_window_s", kMinWindowS);
  }

  void observe(const Sample& s, const SampleContext& ctx) override {
    process_lists_.add(s);
    const ProcessTree& tree = ctx.tree();
    for (const GpuSample& g : s.gpus) {
      if (!workload::readable(g) || !g.processes) continue;
      const opt<double> busy =
          g.gpm.sm_active_pct ? g.gpm.sm_active_pct : g.util_pct;
      if (!busy) continue;
      PerGpu& st = gpus_[g.index];
      st.window.add(s.t);
      st.busy.add(*busy);
      if (g.util_pct) st.util.add(*g.util_pct);
      if (!g.gpm.sm_active_pct) st.busy_is_sm = false;
      if (g.mem_used_bytes)
        st.peak_used = std::max(st.peak_used, *g.mem_used_bytes);
      for (const GpuProcess& gp : *g.processes) {
        auto it = st.holders.find(gp.pid);
        if (it == st.holders.end()) {
          if (st.holders.size() >= kMaxHolders) continue;
          it = st.holders.emplace(gp.pid, Holder{}).first;
          it->second.label.pid = gp.pid;
        }
        Holder& h = it->second;
        if (const ProcessSample* p = tree.find(gp.pid)) h.label.update(*p);
        ++h.samples;
        h.peak_bytes = std::max(h.peak_bytes, gp.used_bytes.value_or(0));
      }
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [index, st] : gpus_) {
      if (st.window.span() < min_window_s_) continue;
      if (auto peak = underused_peak(index, st))
        out.push_back(make_finding(index, st, whole_window_holders(st), *peak,
                                   *find_gpu_info(*header_, index)));
    }
    return out;
  }

  // What it looks for, held for the whole of a window too short to call it
  // the job's steady use.
  std::optional<std::string> not_judged() const override {
    if (auto why = process_lists_.not_judged()) return why;
    double longest = -1;
    for (const auto& [index, st] : gpus_)
      if (st.window.span() < min_window_s_ && underused_peak(index, st))
        longest = std::max(longest, st.window.span());
    if (longest < 0) return std::nullopt;
    return needs_time("a job holding a GPU with little of its memory",
                      min_window_s_, longest);
  }

 private:
  // The peak memory of the jobs that held the GPU for the whole window when
  // it is under the share and the SMs were far from busy (yet not idle);
  // nullopt otherwise.
  std::optional<uint64_t> underused_peak(int index, const PerGpu& st) const {
    const GpuInfo* info = find_gpu_info(*header_, index);
    if (!info || !info->memory_total_bytes) return std::nullopt;
    if (st.busy.mean() >= max_busy_pct_) return std::nullopt;  // compute-bound
    if (st.util.empty() || st.util.mean() <= kIdleUtilPct) return std::nullopt;
    std::vector<const Holder*> whole = whole_window_holders(st);
    if (whole.empty()) return std::nullopt;
    // Per-process memory where NVML gives it, else the GPU's use.
    uint64_t peak = 0;
    for (const Holder* h : whole) peak += h->peak_bytes;
    if (peak == 0) peak = st.peak_used;
    const double total = static_cast<double>(*info->memory_total_bytes);
    if (peak == 0 || static_cast<double>(peak) >= max_peak_fraction_ * total)
      return std::nullopt;
    return peak;
  }

  std::vector<const Holder*> whole_window_holders(const PerGpu& st) const {
    std::vector<const Holder*> out;
    const double n = static_cast<double>(st.window.samples);
    for (const auto& [pid, h] : st.holders)
      if (n > 0 && static_cast<double>(h.samples) / n >= min_holder_fraction_)
        out.push_back(&h);
    return out;
  }

  Finding make_finding(int index, const PerGpu& st,
                       const std::vector<const Holder*>& whole, uint64_t peak,
                       const GpuInfo& info) const {
    Finding f;
    f.id = kId;
    f.severity = "info";
    f.gpus = {index};
    f.start = st.window.start;
    f.end = st.window.end;
    std::string who;
    for (const Holder* h : whole) {
      f.pids.push_back(h->label.pid);
      who += fmt::format("{}{} (peak {})", who.empty() ? "" : ", ",
                         h->label.text(), gib_text(h->peak_bytes));
    }
    const double share = static_cast<double>(peak) /
                         static_cast<double>(*info.memory_total_bytes);
    f.title = fmt::format(
        "{} is held with {} of its memory used and its SMs "
        "{:.0f}% busy",
        gpu_label(*header_, index), format_fraction(share), st.busy.mean());
    f.evidence = fmt::format(
        "peak GPU memory {} of {} ({}) while {} held it for the whole "
        "window; {} {:.0f}% on average (max {:.0f}%); {}",
        gib_text(peak), gib_text(*info.memory_total_bytes),
        format_fraction(share), who,
        st.busy_is_sm ? "SMs active (GPM)" : "util", st.busy.mean(),
        st.busy.max, format_range(st.window.start, st.window.end));
    f.action =
        "This job uses a small part of the GPU it holds. Raise the batch "
        "size (memory and SMs both have room; scale the learning rate with "
        "it), or run it on a smaller GPU or a MIG slice (`nvidia-smi mig "
        "-lgip` lists the profiles; a 1g/2g slice fits this footprint) and "
        "give the rest of the GPU to other work; several such jobs can "
        "share one GPU through MIG or MPS.";
    return f;
  }

  const TraceHeader* header_ = nullptr;
  double max_peak_fraction_ = kMaxPeakFraction, max_busy_pct_ = kMaxBusyPct,
         min_holder_fraction_ = kMinHolderFraction, min_window_s_ = kMinWindowS;
  std::map<int, PerGpu> gpus_;  // bounded by the number of GPUs
  ProcessListsSeen process_lists_;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_memory_underused_rule() {
  return std::make_unique<MemoryUnderusedRule>();
}

}  // namespace gd
