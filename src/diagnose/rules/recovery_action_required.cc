// recovery-action-required: NVML's GPU recovery action (the value Xid 154
// announces) says the GPU must be reset, drained of P2P traffic, drained and
// reset, or the node rebooted. The last reading is the truth: an action that
// was cleared later in the window (the GPU was reset) is history, which
// xid-error tells. The Xid 154 line of the change is named when logged.
#include <fmt/format.h>

#include <map>

#include "diagnose/evidence.h"
#include "diagnose/rule.h"
#include "diagnose/xid_recovery_action.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

class RecoveryActionRequiredRule : public Rule {
 public:
  const char* id() const override { return "recovery-action-required"; }

  void begin(const TraceHeader& header, const Config&) override {
    header_ = &header;
  }

  void observe(const Sample& s, const SampleContext&) override {
    for (const auto& g : s.gpus) {
      if (g.lost || g.stale || g.recovery_action.empty()) continue;
      auto& st = gpus_[g.index];
      st.last = g.recovery_action;
      if (g.recovery_action == kRecoveryNone) {
        st.required = Span{};  // cleared: a later requirement starts afresh
        continue;
      }
      st.required.add(s.t);
    }
    for (const auto& e : s.events) {
      if (e.kind != "xid" || !e.code || *e.code != 154 || !e.gpu) continue;
      auto& st = gpus_[*e.gpu];
      st.xid154.add(event_time(e, s.t));
      st.xid154_text = e.text;
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [index, st] : gpus_) {
      if (st.last.empty() || st.last == kRecoveryNone || st.required.empty())
        continue;
      out.push_back(make_finding(index, st));
    }
    return out;
  }

 private:
  struct State {
    std::string last;  // the last known value
    Span required;     // samples with the current non-none action
    Span xid154;
    std::string xid154_text;  // the last Xid 154 line
  };

  Finding make_finding(int index, const State& st) const {
    std::optional<RecoveryAction> action = recovery_action_from_name(st.last);
    std::string label =
        action ? std::string(recovery_action_label(*action)) : st.last;
    Finding f;
    f.id = id();
    f.severity = "critical";
    f.gpus = {index};
    f.title =
        fmt::format("{} needs recovery: {}", gpu_label(*header_, index), label);
    f.evidence =
        fmt::format("NVML recovery action {} in {} sample{} ({})", st.last,
                    st.required.count, st.required.count == 1 ? "" : "s",
                    format_range(st.required.first, st.required.last));
    f.start = st.required.first;
    f.end = st.required.last;
    if (!st.xid154.empty()) {
      f.evidence += fmt::format(
          "; kernel logged Xid 154 {}x, last at {}: \"{}\"", st.xid154.count,
          format_time(st.xid154.last), st.xid154_text);
      f.start = std::min(f.start, st.xid154.first);
    }
    if (action) {
      f.action = std::string(recovery_action_fix(*action));
      if (*action != RecoveryAction::node_reboot)
        f.action += fmt::format(" For this GPU: nvidia-smi -r -i {}.", index);
    } else {
      f.action = fmt::format(
          "Do what `nvidia-smi -q -i {}` lists under the GPU recovery action "
          "before scheduling more work on it.",
          index);
    }
    f.action +=
        " Until then the GPU cannot serve its work as it should; afterwards "
        "check that the recovery action reads None.";
    return f;
  }

  const TraceHeader* header_ = nullptr;
  std::map<int, State> gpus_;  // bounded by the number of GPUs
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_recovery_action_required_rule() {
  return std::make_unique<RecoveryActionRequiredRule>();
}

}  // namespace gd
