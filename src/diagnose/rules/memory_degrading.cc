// memory-degrading: the GPU's memory is wearing out, not just waiting for a
// reset. Any of: remapped rows grew during the window (more than the one
// correctable remap a healthy GPU sees now and then: that one is
// ecc-reset-required while pending), the bank remap availability histogram
// has banks at low or none (spare rows running out), a row remap failed, or
// NVML's SRAM uncorrectable ECC threshold is exceeded. NVIDIA's RMA guidance
// for Ampere and later treats a remap failure (a bank with no spare row left
// for an error) as grounds for replacement, and asks for the remapper's
// counts, so the evidence gives them.
#include <fmt/format.h>

#include <map>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

// One correctable remap is routine (a weak cell found and replaced); two or
// more within one window mean cells keep failing.
constexpr double kCorrectableRowsGrowth = 2;
// A row remapped for an uncorrectable error is data lost: one is enough.
constexpr double kUncorrectableRowsGrowth = 1;
// Banks at `low` or `none` in the histogram: one bank about to run out of
// spare rows is where the next failure will fail to remap.
constexpr double kLowBanks = 1;

class MemoryDegradingRule : public Rule {
 public:
  const char* id() const override { return "memory-degrading"; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    correctable_growth_ =
        config.get("memory-degrading.correctable_rows_growth_count",
                   kCorrectableRowsGrowth);
    uncorrectable_growth_ =
        config.get("memory-degrading.uncorrectable_rows_growth_count",
                   kUncorrectableRowsGrowth);
    low_banks_ = config.get("memory-degrading.low_banks_count", kLowBanks);
  }

  void observe(const Sample& s, const SampleContext&) override {
    for (const auto& g : s.gpus) {
      if (g.lost || g.stale) continue;
      auto& st = gpus_[g.index];
      ++st.readings;
      if (g.remapped_rows_correctable_total ||
          g.remapped_rows_uncorrectable_total || g.row_remap_histogram ||
          g.remapped_rows_pending || g.remapped_rows_failure ||
          g.ecc_sram_threshold_exceeded)
        st.with_facts = true;
      track(st.correctable, g.remapped_rows_correctable_total, s.t);
      track(st.uncorrectable, g.remapped_rows_uncorrectable_total, s.t);
      if (g.row_remap_histogram) {
        st.histogram = *g.row_remap_histogram;
        const RowRemapHistogram& h = *g.row_remap_histogram;
        if (h.low + h.none >= low_banks_) st.low_banks.add(s.t);
      }
      if (g.remapped_rows_failure.value_or(false)) st.failure.add(s.t);
      if (g.ecc_sram_threshold_exceeded.value_or(false)) st.sram.add(s.t);
      if (g.ecc_sram_uncorrectable_aggregate_total)
        st.sram_uncorrectable = g.ecc_sram_uncorrectable_aggregate_total;
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [index, st] : gpus_) {
      bool grew = st.correctable.grew(correctable_growth_) ||
                  st.uncorrectable.grew(uncorrectable_growth_);
      if (!grew && st.low_banks.empty() && st.failure.empty() &&
          st.sram.empty())
        continue;
      out.push_back(make_finding(index, st, grew));
    }
    return out;
  }

  // Row remapping is what shows memory wearing out; a GPU whose driver
  // gives none of its counters (GPUs before Ampere retire pages instead;
  // ecc-uncorrectable watches those) cannot be judged by this rule.
  std::optional<std::string> not_judged() const override {
    for (const auto& [index, st] : gpus_)
      if (!st.with_facts)
        return needs_field(fmt::format("{}'s row-remapping counters",
                                       gpu_label(*header_, index)),
                           st.readings);
    return std::nullopt;
  }

 private:
  // First and last known value of a lifetime counter.
  struct Counter {
    opt<uint64_t> first, last;
    double first_t = 0, last_t = 0;
    bool grew(double by) const {
      return first && *last >= *first &&
             static_cast<double>(*last - *first) >= by;
    }
  };
  static void track(Counter& c, const opt<uint64_t>& v, double t) {
    if (!v) return;
    if (!c.first) c.first = v, c.first_t = t;
    c.last = v, c.last_t = t;
  }

  struct State {
    size_t readings = 0;
    bool with_facts = false;  // some reading gave a row-remapping fact
    Counter correctable, uncorrectable;
    opt<RowRemapHistogram> histogram;  // the last known one
    Span low_banks, failure, sram;
    opt<uint64_t> sram_uncorrectable;
  };

  static std::string counter_text(const char* what, const Counter& c) {
    if (!c.first) return fmt::format("{} unknown", what);
    if (*c.last == *c.first) return fmt::format("{} {}", what, *c.last);
    return fmt::format("{} {} -> {}", what, *c.first, *c.last);
  }

  Finding make_finding(int index, const State& st, bool grew) const {
    Finding f;
    f.id = id();
    f.severity = "critical";
    f.gpus = {index};
    f.title = fmt::format("{} memory is degrading", gpu_label(*header_, index));
    std::vector<std::string> why;
    bool have = false;
    auto widen = [&](double a, double b) {
      f.start = have ? std::min(f.start, a) : a;
      f.end = have ? std::max(f.end, b) : b;
      have = true;
    };
    if (grew) {
      const Counter& c =
          st.correctable.first ? st.correctable : st.uncorrectable;
      why.push_back(fmt::format("remapped rows grew during the window ({})",
                                format_range(c.first_t, c.last_t)));
      widen(c.first_t, c.last_t);
    }
    if (!st.low_banks.empty()) {
      why.push_back(fmt::format(
          "banks with few or no spare rows left in {} sample{} ({})",
          st.low_banks.count, st.low_banks.count == 1 ? "" : "s",
          format_range(st.low_banks.first, st.low_banks.last)));
      widen(st.low_banks.first, st.low_banks.last);
    }
    if (!st.failure.empty()) {
      why.push_back(
          fmt::format("row remapping failed (flag set {})",
                      format_range(st.failure.first, st.failure.last)));
      widen(st.failure.first, st.failure.last);
    }
    if (!st.sram.empty()) {
      why.push_back(fmt::format(
          "SRAM uncorrectable ECC threshold exceeded ({}{})",
          format_range(st.sram.first, st.sram.last),
          st.sram_uncorrectable
              ? fmt::format(", {} SRAM uncorrectable errors lifetime",
                            *st.sram_uncorrectable)
              : ""));
      widen(st.sram.first, st.sram.last);
    }
    std::string counts = fmt::format(
        "remapped rows: {}, {}", counter_text("correctable", st.correctable),
        counter_text("uncorrectable", st.uncorrectable));
    if (st.histogram) {
      const RowRemapHistogram& h = *st.histogram;
      counts += fmt::format(
          "; bank remap availability: max {} high {} partial {} low {} none {}",
          h.max, h.high, h.partial, h.low, h.none);
    }
    f.evidence = fmt::format("{}; {}", fmt::join(why, "; "), counts);
    f.action = fmt::format(
        "Drain GPU {0} (schedule no new work on it) and plan its replacement "
        "(RMA): its memory keeps failing and the spare rows that absorb the "
        "failures are finite; a remap failure or a bank without spare rows "
        "qualifies for RMA under NVIDIA's guidance. Record `nvidia-smi -q -d "
        "ROW_REMAPPER -i {0}` (correctable and uncorrectable remapped rows, "
        "pending, remapping failure, bank remap availability histogram), "
        "`nvidia-smi -q -d ECC -i {0}` (aggregate SRAM/DRAM counts) and the "
        "serial number, and attach an nvidia-bug-report.sh log to the RMA "
        "request.",
        index);
    return f;
  }

  const TraceHeader* header_ = nullptr;
  double correctable_growth_ = kCorrectableRowsGrowth;
  double uncorrectable_growth_ = kUncorrectableRowsGrowth;
  double low_banks_ = kLowBanks;
  std::map<int, State> gpus_;  // bounded by the number of GPUs
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_memory_degrading_rule() {
  return std::make_unique<MemoryDegradingRule>();
}

}  // namespace gd
