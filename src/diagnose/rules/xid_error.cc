// xid-error: every Xid event of the window, grouped per (GPU, code) and
// explained from gpudoctor's Xid catalogue (xid_catalog.h): what it means,
// which class of cause it points at, and what to do. Unknown codes still make
// a finding that carries the raw kernel line. Some severities need context
// (xid_catalog.cc says where each comes from): Xid 63 after correctable
// errors only is a pending remap; Xid 154 follows the recovery action it
// announces; Xid 119/120 on several GPUs blame the driver / GSP firmware.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"
#include "diagnose/xid_catalog.h"
#include "diagnose/xid_recovery_action.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

// NVIDIA's Xid 13/31 workflows ask whether a fault repeats before suspecting
// the hardware; this many events of one application-class code on one GPU
// within the window count as "repeating".
constexpr double kRepeatCount = 3;
// Distinct pids remembered per group (enough to name the offenders, bounded).
constexpr size_t kMaxPids = 16;

// GPUs of one host logging GSP Xids (119/120) in the window from which the
// driver / GSP firmware, not each GPU, is the suspect.
constexpr double kGspGpus = 2;

constexpr int kUnknownGpu = -1;
constexpr int kUnknownCode = -1;

class XidErrorRule : public Rule {
 public:
  const char* id() const override { return "xid-error"; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    repeat_count_ = config.get("xid-error.repeat_count", kRepeatCount);
    gsp_gpus_ = config.get("xid-error.gsp_gpus", kGspGpus);
  }

  void observe(const Sample& s, const SampleContext&) override {
    for (const auto& g : s.gpus) {
      if (g.ecc_dbe_volatile_total.value_or(0) > 0)
        context_[g.index].uncorrectable_ecc = true;
      if (g.remapped_rows_failure.value_or(false))
        context_[g.index].remap_failure = true;
    }
    for (const auto& e : s.events) {
      if (e.kind != "xid") continue;
      int code = e.code.value_or(kUnknownCode);
      int gpu = e.gpu.value_or(kUnknownGpu);
      note_context(gpu, code);
      auto& g = groups_[{gpu, code}];
      g.when.add(event_time(e, s.t));
      if (g.first_text.empty()) g.first_text = e.text;
      g.last_text = e.text;
      std::string sev =
          code == kUnknownCode ? "warning" : xid_severity(code, e.text);
      if (severity_rank(sev) > severity_rank(g.severity)) {
        g.severity = sev;
        g.worst_text = e.text;
      }
      if (e.pid && g.pids.size() < kMaxPids) g.pids.insert(*e.pid);
    }
  }

  std::vector<Finding> finish() override {
    for (const auto& [key, g] : groups_)
      if ((key.second == 119 || key.second == 120) && key.first != kUnknownGpu)
        gsp_gpus_seen_.insert(key.first);
    std::vector<Finding> out;
    for (const auto& [key, g] : groups_)
      out.push_back(make_finding(key.first, key.second, g));
    return out;
  }

  std::optional<std::string> not_judged() const override {
    return needs_kernel_log(*header_, "Xid");
  }

 private:
  struct Group {
    Span when;
    std::string severity = "info";
    std::string first_text, worst_text, last_text;
    std::set<uint32_t> pids;
  };

  // Uncorrectable errors and remap failures the Xids themselves report.
  void note_context(int gpu, int code) {
    switch (code) {
      case 48:   // double-bit ECC error
      case 94:   // contained uncorrectable error
      case 95:   // uncontained uncorrectable error
      case 140:  // uncorrectable error that escaped remapping
      case 171:  // uncorrectable DRAM error
      case 172:  // uncorrectable SRAM error
        context_[gpu].uncorrectable_ecc = true;
        break;
      case 64:  // remap / page retirement recording failed
        context_[gpu].remap_failure = true;
        break;
      default:
        break;
    }
  }

  XidContext context_of(int gpu) const {
    auto it = context_.find(gpu);
    return it == context_.end() ? XidContext{} : it->second;
  }

  Finding make_finding(int gpu, int code, const Group& g) const {
    Finding f;
    f.id = id();
    f.severity = g.severity;
    const XidContext context = context_of(gpu);
    const bool pending_remap = xid_is_pending_remap(code, context);
    if (pending_remap) f.severity = xid_severity(code, g.worst_text, context);
    // Xid 154: the last change says which action is required now.
    std::optional<RecoveryActionChange> recovery;
    if (code == 154) recovery = parse_recovery_action_change(g.last_text);
    if (recovery) f.severity = recovery_action_severity(recovery->to);
    const bool gsp_on_several =
        (code == 119 || code == 120) && gsp_gpus_seen_.count(gpu) &&
        static_cast<double>(gsp_gpus_seen_.size()) >= gsp_gpus_;
    if (gpu != kUnknownGpu) f.gpus = {gpu};
    f.pids.assign(g.pids.begin(), g.pids.end());
    f.start = g.when.first;
    f.end = g.when.last;
    std::string who = gpu == kUnknownGpu ? "A GPU (PCI address not matched)"
                                         : gpu_label(*header_, gpu);
    std::string times =
        g.when.count == 1
            ? fmt::format("once, at {}", format_time(g.when.first))
            : fmt::format("{} times, {}", g.when.count,
                          format_range(g.when.first, g.when.last));
    const XidInfo* info = code == kUnknownCode ? nullptr : find_xid(code);
    std::string code_text = code == kUnknownCode
                                ? "an Xid with no readable code"
                                : fmt::format("Xid {}", code);
    if (!info) {
      f.title = fmt::format("{} logged {} (not in gpudoctor's Xid catalogue)",
                            who, code_text);
      f.evidence = fmt::format("{} logged {}; raw line: \"{}\"", code_text,
                               times, g.first_text);
      f.action =
          "Look the code up in NVIDIA's Xid catalogue "
          "(docs.nvidia.com/deploy/xid-errors) and follow its immediate "
          "action; if it repeats, collect nvidia-bug-report.sh output and "
          "contact support.";
      return f;
    }
    f.title = fmt::format("{} logged Xid {} ({}): {}", who, code,
                          xid_cause_name(info->cause), info->meaning);
    f.evidence = fmt::format(
        "Xid {} {} logged {}; cause class: {}; first line: \"{}\"", code,
        info->mnemonic, times, xid_cause_name(info->cause), g.first_text);
    if (g.worst_text != g.first_text && !g.worst_text.empty())
      f.evidence += fmt::format("; most severe line: \"{}\"", g.worst_text);
    if (!g.pids.empty())
      f.evidence += fmt::format("; pids: {}", fmt::join(g.pids, ", "));
    f.action = info->action;
    if (pending_remap) explain_pending_remap(f);
    if (recovery) explain_recovery(*recovery, g, f);
    if (gsp_on_several) explain_gsp_on_several(f);
    // The catalogue's reset command, made specific to this GPU.
    if (gpu != kUnknownGpu)
      for (size_t at = f.action.find("nvidia-smi -r"); at != std::string::npos;
           at = f.action.find("nvidia-smi -r", at + 1)) {
        std::string specific = fmt::format("nvidia-smi -r -i {}", gpu);
        f.action.replace(at, std::string_view("nvidia-smi -r").size(),
                         specific);
        at += specific.size() - 1;
      }
    bool repeating = static_cast<double>(g.when.count) >= repeat_count_;
    if (info->cause == XidCause::application && repeating) {
      f.action += fmt::format(
          " It repeated {} times on this GPU{}: if different programs hit it "
          "here but not on other GPUs, suspect the GPU and run DCGM "
          "diagnostics.",
          g.when.count,
          g.pids.size() > 1 ? fmt::format(" from {} processes", g.pids.size())
                            : "");
    }
    return f;
  }

  static void explain_pending_remap(Finding& f) {
    f.title += " (pending remap after correctable errors)";
    f.evidence +=
        "; no uncorrectable ECC error and no remap failure on this GPU in the "
        "window: the remap is pending, not a fault";
    f.action =
        "Reset the GPU (or reboot) to apply the remap, when it is drained: "
        "schedule no new work on it, let running work finish, then "
        "nvidia-smi -r. It keeps working until then; check `nvidia-smi -q -d "
        "ROW_REMAPPER` shows no pending remap afterwards.";
  }

  static void explain_recovery(const RecoveryActionChange& change,
                               const Group& g, Finding& f) {
    std::string to(recovery_action_label(change.to));
    f.title += fmt::format(" — recovery action: {}", to);
    f.evidence += fmt::format(
        "; recovery action now: {} ({}{})", to, recovery_action_name(change.to),
        change.from ? fmt::format(", changed from {}",
                                  recovery_action_label(*change.from))
                    : "");
    if (g.last_text != g.first_text)
      f.evidence += fmt::format("; last line: \"{}\"", g.last_text);
    f.action = recovery_action_fix(change.to);
  }

  void explain_gsp_on_several(Finding& f) const {
    std::string driver =
        header_->driver && !header_->driver->driver_version.empty()
            ? fmt::format("driver {}", header_->driver->driver_version)
            : "one driver";
    f.title += fmt::format(" — on {} GPUs: driver / GSP firmware suspected",
                           gsp_gpus_seen_.size());
    f.evidence += fmt::format(
        "; GSP Xids (119/120) on {} GPUs of this host (GPUs {}), "
        "all under {}",
        gsp_gpus_seen_.size(), fmt::join(gsp_gpus_seen_, ", "), driver);
    f.action = fmt::format(
        "Several GPUs, one driver: update the driver (or disable GSP firmware: "
        "`options nvidia NVreg_EnableGpuFirmware=0`, closed kernel modules "
        "only) rather than suspecting each GPU's hardware; {} is the common "
        "factor. Reset the affected GPUs or reboot the node to recover; "
        "contact support if it persists on a current driver.",
        driver);
  }

  const TraceHeader* header_ = nullptr;
  double repeat_count_ = kRepeatCount;
  double gsp_gpus_ = kGspGpus;
  // Per GPU (kUnknownGpu included): what the window says around its Xids.
  std::map<int, XidContext> context_;
  std::set<int> gsp_gpus_seen_;
  // Bounded by (GPUs + 1) x distinct codes.
  std::map<std::pair<int, int>, Group> groups_;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_xid_error_rule() {
  return std::make_unique<XidErrorRule>();
}

}  // namespace gd
