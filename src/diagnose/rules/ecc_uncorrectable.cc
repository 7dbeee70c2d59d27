// ecc-uncorrectable: GPU memory lost data — the volatile double-bit (DBE)
// counter grew during the window, a row remap failed, retired pages are
// pending, or the kernel logged an uncorrectable-memory Xid (48, 64, 94, 95,
// 140). Growth of the correctable (single-bit) counter alone is normal
// background and never fires this rule.
#include <fmt/format.h>

#include <map>

#include "diagnose/evidence.h"
#include "diagnose/rule.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

// One new uncorrectable error already means corrupted data reached (or was
// stopped before) an application.
constexpr double kMinDbeGrowth = 1;

bool uncorrectable_xid(int code) {
  return code == 48 || code == 64 || code == 94 || code == 95 || code == 140;
}

// Growth of a cumulative counter across samples; a drop (GPU reset, driver
// reload) starts a new baseline instead of counting negative.
struct CounterGrowth {
  opt<uint64_t> first, prev;
  uint64_t growth = 0;
  Span grew;
  void add(double t, uint64_t v) {
    if (!first) first = v;
    if (prev && v > *prev) {
      growth += v - *prev;
      grew.add(t);
    }
    prev = v;
  }
};

class EccUncorrectableRule : public Rule {
 public:
  const char* id() const override { return "ecc-uncorrectable"; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    min_dbe_growth_ =
        config.get("ecc-uncorrectable.min_dbe_growth", kMinDbeGrowth);
  }

  void observe(const Sample& s, const SampleContext&) override {
    for (const auto& g : s.gpus) {
      if (g.lost || g.stale) continue;
      auto& st = gpus_[g.index];
      if (g.ecc_dbe_volatile_total) st.dbe.add(s.t, *g.ecc_dbe_volatile_total);
      if (g.ecc_sbe_volatile_total) st.sbe.add(s.t, *g.ecc_sbe_volatile_total);
      if (g.remapped_rows_failure && *g.remapped_rows_failure)
        st.remap_failure.add(s.t);
      if (g.retired_pages_pending) {
        st.retired_pending_last = *g.retired_pages_pending;
        if (*g.retired_pages_pending) st.retired_pending.add(s.t);
      }
    }
    for (const auto& e : s.events) {
      if (e.kind != "xid" || !e.code || !uncorrectable_xid(*e.code) || !e.gpu)
        continue;
      auto& st = gpus_[*e.gpu];
      st.xids.add(event_time(e, s.t));
      if (st.xid_codes.size() < 8 &&
          st.xid_codes.find(*e.code) == std::string::npos)
        st.xid_codes +=
            (st.xid_codes.empty() ? "" : ", ") + std::to_string(*e.code);
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [index, st] : gpus_) {
      bool dbe = static_cast<double>(st.dbe.growth) >= min_dbe_growth_ &&
                 st.dbe.growth > 0;
      bool failure = !st.remap_failure.empty();
      bool pending = st.retired_pending_last.value_or(false);
      bool xid = !st.xids.empty();
      if (!dbe && !failure && !pending && !xid) continue;

      Finding f;
      f.id = id();
      f.severity = "critical";
      f.gpus = {index};
      f.title = fmt::format("{} has uncorrectable memory (ECC) errors",
                            gpu_label(*header_, index));
      std::vector<std::string> parts;
      double start = 0, end = 0;
      bool have = false;
      auto widen = [&](const Span& sp) {
        if (sp.empty()) return;
        start = have ? std::min(start, sp.first) : sp.first;
        end = have ? std::max(end, sp.last) : sp.last;
        have = true;
      };
      if (dbe) {
        parts.push_back(
            fmt::format("ecc_dbe_volatile_total grew by {} (from {} to {}), {}",
                        st.dbe.growth, *st.dbe.first, *st.dbe.prev,
                        format_range(st.dbe.grew.first, st.dbe.grew.last)));
        widen(st.dbe.grew);
      }
      if (failure) {
        parts.push_back(fmt::format(
            "remapped_rows_failure true in {} samples from {}",
            st.remap_failure.count, format_time(st.remap_failure.first)));
        widen(st.remap_failure);
      }
      if (pending) {
        parts.push_back(fmt::format(
            "retired_pages_pending true (in {} samples from {})",
            st.retired_pending.count, format_time(st.retired_pending.first)));
        widen(st.retired_pending);
      }
      if (xid) {
        parts.push_back(fmt::format(
            "uncorrectable-memory Xid {} logged {} time{}", st.xid_codes,
            st.xids.count, st.xids.count == 1 ? "" : "s"));
        widen(st.xids);
      }
      if (st.sbe.growth > 0)
        parts.push_back(fmt::format(
            "correctable (single-bit) errors grew by {}", st.sbe.growth));
      f.evidence = fmt::format("{}", fmt::join(parts, "; "));
      f.start = start;
      f.end = end;

      if (failure)
        f.action =
            "Row remapping failed: the GPU has run out of spare memory rows. "
            "Drain the node, stop using this GPU, run field diagnostics and "
            "open an RMA with the vendor (remap failure is a replacement "
            "criterion).";
      else
        f.action = fmt::format(
            "Drain GPU {0} (let running jobs finish or move them; their "
            "results may be corrupt), then reset it (nvidia-smi -r -i {0}) or "
            "reboot so the bad memory is remapped/retired. Afterwards check "
            "`nvidia-smi -q -i {0} -d ROW_REMAPPER,PAGE_RETIREMENT`: if "
            "remapping failed or errors return, run field diagnostics and RMA "
            "the GPU.",
            index);
      out.push_back(std::move(f));
    }
    return out;
  }

 private:
  struct State {
    CounterGrowth dbe, sbe;
    Span remap_failure, retired_pending, xids;
    opt<bool> retired_pending_last;
    std::string xid_codes;
  };
  const TraceHeader* header_ = nullptr;
  double min_dbe_growth_ = kMinDbeGrowth;
  std::map<int, State> gpus_;  // bounded by the number of GPUs
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_ecc_uncorrectable_rule() {
  return std::make_unique<EccUncorrectableRule>();
}

}  // namespace gd
