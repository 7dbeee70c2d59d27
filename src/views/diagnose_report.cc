#include "views/diagnose_report.h"

#include <fmt/format.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "common/terminal_text.h"
#include "diagnose/evidence.h"
#include "diagnose/finding_json.h"

namespace gd {
namespace {

// Titles and evidence quote process names, command lines and kernel lines:
// untrusted text on a terminal.
std::string safe(std::string_view text) {
  return terminal_safe(text, kTerminalSentenceMax);
}

std::string upper(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string window_line(const DiagnoseResult& r, const TraceHeader& h) {
  std::string host =
      h.host.hostname.empty() ? "this host" : safe(h.host.hostname);
  std::string gpus =
      fmt::format("{} GPU{}", h.gpus.size(), h.gpus.size() == 1 ? "" : "s");
  if (r.window.samples == 0)
    return fmt::format("{}, {}: no samples", host, gpus);
  return fmt::format("{}, {}: {} sample{}, {}", host, gpus, r.window.samples,
                     r.window.samples == 1 ? "" : "s",
                     format_range(r.window.start, r.window.end));
}

}  // namespace

std::string format_text_report(const DiagnoseResult& result,
                               const TraceHeader& header) {
  std::string out =
      "gpudoctor diagnose — " + window_line(result, header) + "\n";
  if (result.findings.empty()) {
    out += fmt::format(
        "\nAll is well: no rule found a problem.\nChecked ({} rules): {}\n",
        result.rules_checked.size(), fmt::join(result.rules_checked, ", "));
    return out;
  }
  int counts[3] = {0, 0, 0};
  for (const auto& f : result.findings) {
    int rank = severity_rank(f.severity);
    if (rank >= 0) ++counts[rank];
    out += fmt::format("\n{:<8}  {}  {}\n", upper(safe(f.severity)), safe(f.id),
                       safe(f.title));
    out += "  evidence: " + safe(f.evidence) + "\n";
    out += "  action:   " + safe(f.action) + "\n";
  }
  out +=
      fmt::format("\n{} critical, {} warning{}, {} info ({} rules checked)\n",
                  counts[2], counts[1], counts[1] == 1 ? "" : "s", counts[0],
                  result.rules_checked.size());
  return out;
}

std::string format_json_report(const DiagnoseResult& result) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : result.findings) findings.push_back(finding_to_json(f));
  nlohmann::json window = {{"samples", result.window.samples}};
  // No samples: the window has no time range (null = unknown, never 0).
  window["start"] =
      result.window.samples ? nlohmann::json(result.window.start) : nullptr;
  window["end"] =
      result.window.samples ? nlohmann::json(result.window.end) : nullptr;
  nlohmann::json doc = {{"findings", findings},
                        {"window", window},
                        {"checked", result.rules_checked}};
  return doc.dump();
}

}  // namespace gd
