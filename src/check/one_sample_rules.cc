// The rules of diagnose that a single sample judges soundly, run on the one
// sample of check: a state (a lost GPU, a pending remap, a recovery action,
// a retired page pending, NVML against the driver, the PCI bus against
// NVML) or the kernel log's lines, which the sample carries since boot (or
// --since). The rules that need a window (growth of a counter, a link down
// for 10 samples) are check's own judges instead (judges/). Check gives
// each its own severity: what stops a job is critical, what does not is a
// warning.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>

#include "check/check.h"
#include "diagnose/xid_catalog.h"

namespace gd::check {
namespace {

// id -> the severity check gives it; "" keeps the rule's own (xid-error:
// by code; an info Xid is left out).
const std::map<std::string, std::string, std::less<>>& used_rules() {
  static const std::map<std::string, std::string, std::less<>> rules = {
      {"gpu-missing", "critical"},
      {"gpu-lost", "critical"},
      {"xid-error", ""},
      {"recovery-action-required", "critical"},
      {"ecc-uncorrectable", "critical"},   // retired pages pending, failure
      {"ecc-reset-required", "critical"},  // a pending remap stops a job
      {"memory-degrading", "critical"},    // remap failure, SRAM threshold
      {"nvml-driver-mismatch", "critical"},
      {"persistence-mode-off", "warning"},
  };
  return rules;
}

// "it fell off the bus" from "... over PCIe (it fell off the bus)": the
// catalogue's meanings end in their short form where they have one.
std::string short_meaning(std::string_view meaning) {
  constexpr size_t kMax = 60;
  if (!meaning.empty() && meaning.back() == ')') {
    size_t open = meaning.rfind('(');
    if (open != std::string_view::npos)
      return std::string(meaning.substr(open + 1, meaning.size() - open - 2));
  }
  return std::string(meaning.substr(0, kMax));
}

// The Xid code a finding's text names; -1 when none, or one of more than six
// digits (no code is: they end at 65535).
int xid_code_of(const std::string& text) {
  static const std::regex code_re("Xid ([0-9]{1,6})(?![0-9])");
  std::smatch m;
  return std::regex_search(text, m, code_re) ? std::stoi(m[1]) : -1;
}

std::string xid_brief(const std::string& text) {
  const int code = xid_code_of(text);
  if (code < 0) return "an Xid";
  const XidInfo* info = find_xid(code);
  if (!info) return fmt::format("Xid {}", code);
  return fmt::format("Xid {} ({})", code, short_meaning(info->meaning));
}

// The newest stamp of the kernel-log lines behind an Xid finding (`code` on
// the finding's GPU); 0 when none had one.
double xid_logged_at(const Input& in, const Finding& f, int code) {
  double at = 0;
  for (const auto& e : in.sample->events)
    if (e.kind == "xid" && e.code == code && e.logged_at &&
        (f.gpus.empty() || e.gpu == f.gpus.front()))
      at = std::max(at, *e.logged_at);
  return at;
}

std::string recovery_of(const Input& in, const Finding& f) {
  for (const auto& g : in.sample->gpus)
    if (!f.gpus.empty() && g.index == f.gpus.front() &&
        !g.recovery_action.empty())
      return fmt::format("recovery action {}", g.recovery_action);
  return "recovery action required";
}

std::string brief_of(const Input& in, const Finding& f) {
  if (f.id == "xid-error") return xid_brief(f.title);
  if (f.id == "gpu-lost")
    return f.evidence.find("Xid 79") != std::string::npos
               ? "Xid 79 (it fell off the bus)"
               : "lost (NVML: GPU is lost)";
  if (f.id == "recovery-action-required") return recovery_of(in, f);
  if (f.id == "ecc-uncorrectable") return "uncorrectable ECC / retired pages";
  if (f.id == "ecc-reset-required") return "row remap pending (needs reset)";
  if (f.id == "memory-degrading") return "memory degrading (remap failure)";
  if (f.id == "nvml-driver-mismatch") return "NVML/driver version mismatch";
  if (f.id == "persistence-mode-off") return "persistence mode off";
  return f.title;  // gpu-missing: names the PCI address
}

}  // namespace

void run_one_sample_rules(const Input& in, std::vector<CheckFinding>& out,
                          std::vector<NotJudged>& not_judged,
                          std::vector<std::string>& checked) {
  DiagnoseOptions options;
  // A bank at `low` still has spare rows: on one sample only a bank at
  // `none` stops a job (judges/banks_without_spares.cc).
  options.config.set("memory-degrading.low_banks_count", 1e15);
  VectorSampleSource one({*in.sample});
  DiagnoseResult r = diagnose(*in.header, one, options);
  const auto& rules = used_rules();
  for (auto& f : r.findings) {
    auto it = rules.find(f.id);
    if (it == rules.end()) continue;
    if (!it->second.empty()) f.severity = it->second;
    if (f.severity != "critical" && f.severity != "warning") continue;
    std::string brief = brief_of(in, f);
    double at = 0;
    if (f.id == "xid-error") at = xid_logged_at(in, f, xid_code_of(f.title));
    if (f.id == "gpu-lost") at = xid_logged_at(in, f, 79);
    out.push_back({std::move(f), std::move(brief), at});
  }
  for (auto& n : r.not_judged)
    if (rules.count(n.id)) not_judged.push_back(std::move(n));
  for (const auto& [id, severity] : rules) checked.push_back(id);
}

}  // namespace gd::check
