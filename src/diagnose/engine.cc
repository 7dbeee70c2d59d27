#include "diagnose/engine.h"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "diagnose/evidence.h"

namespace gd {
namespace {

int first_gpu(const Finding& f) {
  return f.gpus.empty() ? -1 : *std::min_element(f.gpus.begin(), f.gpus.end());
}

// A host-wide finding (no GPU) concerns every selection.
bool concerns_any(const Finding& f, const GpuSelection& gpus) {
  if (gpus.empty() || f.gpus.empty()) return true;
  for (int g : f.gpus)
    if (selects(gpus, g)) return true;
  return false;
}

}  // namespace

void sort_findings(std::vector<Finding>& findings) {
  std::stable_sort(
      findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
        int sa = severity_rank(a.severity), sb = severity_rank(b.severity);
        if (sa != sb) return sa > sb;
        int ga = first_gpu(a), gb = first_gpu(b);
        if (ga != gb) return ga < gb;
        if (a.id != b.id) return a.id < b.id;
        return a.start < b.start;
      });
}

DiagnoseResult diagnose(const TraceHeader& header, SampleSource& samples,
                        const DiagnoseOptions& options) {
  const int min_rank = severity_rank(options.min_severity);
  if (min_rank < 0)
    throw std::invalid_argument("unknown severity '" + options.min_severity +
                                "' (expected info, warning or critical)");

  DiagnoseResult result;
  result.min_severity = options.min_severity;
  result.gpus = options.gpus;
  std::vector<std::unique_ptr<Rule>> rules;
  for (const auto& entry : rule_table()) {
    rules.push_back(entry.make());
    rules.back()->begin(header, options.config);
    result.rules_checked.emplace_back(entry.id);
  }
  result.unused_config_keys = options.config.unused_keys();

  Sample sample;
  SampleContext context(sample);  // one for the whole window: storage reused
  while (samples.next(sample)) {
    if (result.window.samples == 0) result.window.start = sample.t;
    result.window.end = sample.t;
    ++result.window.samples;
    if (sample.processes_left_out > 0) {
      ++result.window.samples_with_processes_left_out;
      result.window.most_processes_left_out = std::max(
          result.window.most_processes_left_out, sample.processes_left_out);
    }
    context.reset(sample);
    for (auto& rule : rules) rule->observe(sample, context);
  }

  for (auto& rule : rules) {
    for (auto& f : rule->finish()) {
      const int rank = severity_rank(f.severity);
      if (rank < min_rank) {
        if (rank >= 0) ++result.hidden_by_severity[rank];
        continue;
      }
      if (!concerns_any(f, options.gpus)) {
        if (rank >= 0) ++result.hidden_by_gpu[rank];
        continue;
      }
      result.findings.push_back(std::move(f));
    }
    if (auto why = rule->not_judged())
      result.not_judged.push_back({rule->id(), std::move(*why)});
  }
  sort_findings(result.findings);
  return result;
}

int diagnose_exit_code(const DiagnoseResult& result) {
  int worst = 0;
  for (const auto& f : result.findings)
    worst = std::max(worst, severity_rank(f.severity));
  return worst;  // critical 2, warning 1, info/none 0
}

}  // namespace gd
