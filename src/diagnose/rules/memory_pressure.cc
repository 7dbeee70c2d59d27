// memory-pressure: a GPU's memory stays at or above ~90% of its total, so the
// next allocation (a larger batch, a new process, a cuBLAS workspace) risks
// CUDA out-of-memory.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"
#include "diagnose/rules/workload_common.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "memory-pressure";

// 90% used leaves ~8 GiB on an 80 GiB card: about one activation spike or a
// second process's CUDA context plus workspace.
constexpr double kUsedFraction = 0.90;
// "Stays": most of the window, so a short peak (checkpoint, eval) is not a
// finding.
constexpr double kMinFraction = 0.80;
// Below a minute, a few samples say nothing about "stays".
constexpr double kMinWindowS = 60;

class MemoryPressureRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = header;
    used_fraction_ =
        workload::threshold(config, kId, "used_fraction", kUsedFraction);
    min_fraction_ =
        workload::threshold(config, kId, "min_fraction", kMinFraction);
    min_window_s_ =
        workload::threshold(config, kId, "min_window_s", kMinWindowS);
  }

  void observe(const Sample& s, const SampleContext&) override {
    for (const GpuSample& g : s.gpus) {
      if (!workload::readable(g) || !g.mem_used_bytes) continue;
      const GpuInfo* info = find_gpu_info(header_, g.index);
      if (!info || !info->memory_total_bytes || *info->memory_total_bytes == 0)
        continue;
      PerGpu& st = gpus_[g.index];
      double frac = static_cast<double>(*g.mem_used_bytes) /
                    static_cast<double>(*info->memory_total_bytes);
      st.window.add(s.t);
      st.frac.add(frac);
      if (frac >= used_fraction_) {
        st.high.add(s.t);
        // Remember who held it at the last high sample (bounded: one GPU's
        // process list).
        if (g.processes) {
          st.holders.clear();
          for (const GpuProcess& p : *g.processes)
            if (p.used_bytes) st.holders[p.pid] = *p.used_bytes;
        }
      }
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [index, st] : gpus_) {
      if (st.window.samples == 0 || st.window.span() < min_window_s_) continue;
      double high_frac = static_cast<double>(st.high.count) /
                         static_cast<double>(st.window.samples);
      if (high_frac < min_fraction_) continue;
      uint64_t total = *find_gpu_info(header_, index)->memory_total_bytes;

      Finding f;
      f.id = kId;
      f.severity = "warning";
      f.gpus = {index};
      f.title = fmt::format("GPU {} memory is nearly full", index);
      f.start = st.high.first;
      f.end = st.high.last;
      uint32_t biggest = 0;
      uint64_t biggest_bytes = 0;
      std::string holders;
      for (const auto& [pid, bytes] : st.holders) {
        f.pids.push_back(pid);
        holders += fmt::format("{}pid {} {}", holders.empty() ? "" : ", ", pid,
                               gib_text(bytes));
        if (bytes > biggest_bytes) biggest = pid, biggest_bytes = bytes;
      }
      f.evidence = fmt::format(
          "memory used >= {:.0f}% of {} in {} of {} samples ({}); mean "
          "{:.1f}%, "
          "peak {:.1f}% ({} free at the peak){}",
          used_fraction_ * 100, gib_text(total), format_fraction(high_frac),
          st.window.samples, format_range(st.window.start, st.window.end),
          st.frac.mean() * 100, st.frac.max * 100,
          gib_text(static_cast<uint64_t>((1 - st.frac.max) *
                                         static_cast<double>(total))),
          holders.empty() ? "" : "; held by " + holders);
      f.action = fmt::format(
          "The next allocation may fail with CUDA out of memory. {}Reduce the "
          "batch size or sequence length, enable activation checkpointing or "
          "mixed precision, and with PyTorch set "
          "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to cut "
          "fragmentation. If a caching allocator is only holding a free pool, "
          "torch.cuda.memory_summary() shows how much is really in use.",
          biggest ? fmt::format("The largest holder is pid {} ({}). ", biggest,
                                gib_text(biggest_bytes))
                  : "");
      out.push_back(std::move(f));
    }
    return out;
  }

  // Memory seen high in a window shorter than min_window_s may be a peak,
  // not a level; memory never high was judged.
  std::optional<std::string> not_judged() const override {
    double longest = -1;
    for (const auto& [index, st] : gpus_)
      if (!st.high.empty() && st.window.span() < min_window_s_)
        longest = std::max(longest, st.window.span());
    if (longest < 0) return std::nullopt;
    return needs_time("high GPU memory use", min_window_s_, longest);
  }

 private:
  struct PerGpu {
    workload::Window window;
    Stat frac;
    Span high;
    std::map<uint32_t, uint64_t> holders;
  };
  TraceHeader header_;
  double used_fraction_ = kUsedFraction, min_fraction_ = kMinFraction,
         min_window_s_ = kMinWindowS;
  std::map<int, PerGpu> gpus_;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_memory_pressure_rule() {
  return std::make_unique<MemoryPressureRule>();
}

}  // namespace gd
