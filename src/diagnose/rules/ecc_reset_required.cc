// ecc-reset-required: memory repair is recorded but not applied — row
// remapping (Ampere+) or page retirement (older GPUs) is pending, which only
// takes effect at the next GPU reset. Evidence: the pending flags, or a
// repair Xid (63 row remap / page retirement recorded, 156 resource
// retirement recorded) that no later sample shows as already applied.
#include <fmt/format.h>

#include <map>

#include "diagnose/evidence.h"
#include "diagnose/rule.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

bool repair_recorded_xid(int code) { return code == 63 || code == 156; }

class EccResetRequiredRule : public Rule {
 public:
  const char* id() const override { return "ecc-reset-required"; }

  void begin(const TraceHeader& header, const Config&) override {
    header_ = &header;
  }

  void observe(const Sample& s, const SampleContext&) override {
    for (const auto& g : s.gpus) {
      if (g.lost || g.stale) continue;
      if (!g.remapped_rows_pending && !g.retired_pages_pending) continue;
      auto& st = gpus_[g.index];
      if (g.remapped_rows_failure.value_or(false)) st.remap_failed = true;
      bool rows = g.remapped_rows_pending.value_or(false);
      bool pages = g.retired_pages_pending.value_or(false);
      if (rows) st.rows.add(s.t);
      if (pages) st.pages.add(s.t);
      st.last_known_pending = rows || pages;
      st.last_known_t = s.t;
    }
    for (const auto& e : s.events) {
      if (e.kind != "xid" || !e.code || !repair_recorded_xid(*e.code) || !e.gpu)
        continue;
      auto& st = gpus_[*e.gpu];
      st.xid.add(event_time(e, s.t));
      st.xid_code = *e.code;
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [index, st] : gpus_) {
      // Flags are the truth when known: pending at the last reading. A repair
      // Xid counts unless a later reading said nothing is pending (the GPU
      // was reset after it).
      bool flags = st.last_known_pending.value_or(false);
      bool xid_open = !st.xid.empty() &&
                      !(st.last_known_pending && !*st.last_known_pending &&
                        st.last_known_t > st.xid.last);
      if (!flags && !xid_open) continue;
      Finding f;
      f.id = id();
      f.severity = "warning";
      f.gpus = {index};
      f.title = fmt::format("{} needs a reset to apply pending memory repairs",
                            gpu_label(*header_, index));
      std::vector<std::string> parts;
      f.start = f.end = 0;
      bool have = false;
      auto add = [&](const Span& sp, const std::string& what) {
        if (sp.empty()) return;
        parts.push_back(fmt::format("{} in {} sample{} ({})", what, sp.count,
                                    sp.count == 1 ? "" : "s",
                                    format_range(sp.first, sp.last)));
        f.start = have ? std::min(f.start, sp.first) : sp.first;
        f.end = have ? std::max(f.end, sp.last) : sp.last;
        have = true;
      };
      add(st.rows, "remapped_rows_pending true");
      add(st.pages, "retired_pages_pending true");
      if (!st.xid.empty()) {
        parts.push_back(
            fmt::format("Xid {} (repair recorded, applied at reset) at {}",
                        st.xid_code, format_time(st.xid.first)));
        f.start = have ? std::min(f.start, st.xid.first) : st.xid.first;
        f.end = have ? std::max(f.end, st.xid.last) : st.xid.last;
      }
      f.evidence = fmt::format("{}", fmt::join(parts, "; "));
      f.action = fmt::format(
          "At the next convenient moment, stop the processes on GPU {0} and "
          "reset it (nvidia-smi -r -i {0}) or reboot the node; the repair "
          "takes effect only then. Afterwards `nvidia-smi -q -d ROW_REMAPPER` "
          "should show Pending: No and Remapping Failure: No.",
          index);
      // A failed remap stays failed after any reset: the memory is worn out
      // and memory-degrading says what to do (drain, RMA).
      if (st.remap_failed)
        f.action = fmt::format(
            "Reset GPU {0} (nvidia-smi -r -i {0}) only to apply the pending "
            "repairs; a row remap has already failed, which no reset undoes: "
            "see memory-degrading (drain the GPU, plan its replacement).",
            index);
      out.push_back(std::move(f));
    }
    return out;
  }

 private:
  struct State {
    Span rows, pages, xid;
    int xid_code = 63;
    opt<bool> last_known_pending;
    double last_known_t = 0;
    bool remap_failed = false;  // the remap-failure flag was seen
  };
  const TraceHeader* header_ = nullptr;
  std::map<int, State> gpus_;  // bounded by the number of GPUs
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_ecc_reset_required_rule() {
  return std::make_unique<EccResetRequiredRule>();
}

}  // namespace gd
