// xid-error: every Xid event of the window, grouped per (GPU, code) and
// explained from gpudoctor's Xid catalogue (xid_catalog.h): what it means,
// which class of cause it points at, and what to do. Unknown codes still make
// a finding that carries the raw kernel line.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "diagnose/evidence.h"
#include "diagnose/rule.h"
#include "diagnose/xid_catalog.h"

namespace gd {
namespace {

// NVIDIA's Xid 13/31 workflows ask whether a fault repeats before suspecting
// the hardware; this many events of one application-class code on one GPU
// within the window count as "repeating".
constexpr double kRepeatCount = 3;
// Distinct pids remembered per group (enough to name the offenders, bounded).
constexpr size_t kMaxPids = 16;

constexpr int kUnknownGpu = -1;
constexpr int kUnknownCode = -1;

class XidErrorRule : public Rule {
 public:
  const char* id() const override { return "xid-error"; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    repeat_count_ = config.get("xid-error.repeat_count", kRepeatCount);
  }

  void observe(const Sample& s) override {
    for (const auto& e : s.events) {
      if (e.kind != "xid") continue;
      int code = e.code.value_or(kUnknownCode);
      auto& g = groups_[{e.gpu.value_or(kUnknownGpu), code}];
      g.when.add(s.t);
      if (g.first_text.empty()) g.first_text = e.text;
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
    std::vector<Finding> out;
    for (const auto& [key, g] : groups_)
      out.push_back(make_finding(key.first, key.second, g));
    return out;
  }

 private:
  struct Group {
    Span when;
    std::string severity = "info";
    std::string first_text, worst_text;
    std::set<uint32_t> pids;
  };

  Finding make_finding(int gpu, int code, const Group& g) const {
    Finding f;
    f.id = id();
    f.severity = g.severity;
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

  const TraceHeader* header_ = nullptr;
  double repeat_count_ = kRepeatCount;
  // Bounded by (GPUs + 1) x distinct codes.
  std::map<std::pair<int, int>, Group> groups_;
};

}  // namespace

std::unique_ptr<Rule> make_xid_error_rule() {
  return std::make_unique<XidErrorRule>();
}

}  // namespace gd
