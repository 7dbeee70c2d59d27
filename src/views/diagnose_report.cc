#include "views/diagnose_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <nlohmann/json.hpp>

#include "common/terminal_text.h"
#include "diagnose/evidence.h"
#include "diagnose/finding_json.h"
#include "model/process_budget.h"

namespace gd {
namespace {

// Titles and evidence quote process names, command lines and kernel lines:
// untrusted text on a terminal.
std::string sentence_safe(std::string_view text) {
  return terminal_safe(text, kTerminalSentenceMax);
}

std::string upper(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string window_line(const DiagnoseResult& r, const TraceHeader& h) {
  std::string host =
      h.host.hostname.empty() ? "this host" : sentence_safe(h.host.hostname);
  std::string gpus =
      fmt::format("{} GPU{}", h.gpus.size(), h.gpus.size() == 1 ? "" : "s");
  if (r.window.samples == 0)
    return fmt::format("{}, {}: no samples", host, gpus);
  return fmt::format("{}, {}: {} sample{}, {}", host, gpus, r.window.samples,
                     r.window.samples == 1 ? "" : "s",
                     format_range(r.window.start, r.window.end));
}

// "  from serve's history (URL): 600 samples, 08:00:00-08:10:00 UTC (10 min)"
// per part, when the window has more than one origin.
std::string parts_lines(const DiagnoseWindow& w) {
  std::string out;
  for (const auto& p : w.parts) {
    std::string from = p.source == "serve" ? "from serve's history (" +
                                                 sentence_safe(p.url) + ")"
                                           : "sampled live";
    if (p.samples == 0) {
      out += fmt::format("  {}: no samples\n", from);
      continue;
    }
    out += fmt::format("  {}: {} sample{}, {}\n", from, p.samples,
                       p.samples == 1 ? "" : "s", format_range(p.start, p.end));
  }
  return out;
}

// Said whenever a sample kept only part of its processes: a rule judged
// what was kept, never the processes it did not see.
std::string left_out_line(const DiagnoseWindow& w) {
  if (w.samples_with_processes_left_out == 0) return "";
  return fmt::format(
      "  {} sample{} listed more processes than the {} a sample keeps (its "
      "GPU processes and their ancestors first): up to {} left out of one\n",
      w.samples_with_processes_left_out,
      w.samples_with_processes_left_out == 1 ? "" : "s",
      ProcessBudget{}.max_processes, w.most_processes_left_out);
}

std::vector<std::string> judged_ids(const DiagnoseResult& r) {
  std::vector<std::string> out;
  for (const auto& id : r.rules_checked)
    if (std::none_of(r.not_judged.begin(), r.not_judged.end(),
                     [&](const NotJudged& n) { return n.id == id; }))
      out.push_back(id);
  return out;
}

std::string not_judged_lines(const DiagnoseResult& r) {
  std::string out = fmt::format(
      "\nNot judged ({} rule{}: what {} need{} is not in this window):\n",
      r.not_judged.size(), r.not_judged.size() == 1 ? "" : "s",
      r.not_judged.size() == 1 ? "it" : "they",
      r.not_judged.size() == 1 ? "s" : "");
  for (const auto& n : r.not_judged)
    out +=
        fmt::format("  {}: {}\n", sentence_safe(n.id), sentence_safe(n.reason));
  return out;
}

// "1 critical, 2 warnings" ("" for none), most severe first.
std::string counts_text(const std::array<size_t, 3>& c) {
  std::string out;
  auto add = [&](size_t n, const char* one, const char* many) {
    if (n == 0) return;
    out +=
        fmt::format("{}{} {}", out.empty() ? "" : ", ", n, n == 1 ? one : many);
  };
  add(c[2], "critical", "critical");
  add(c[1], "warning", "warnings");
  add(c[0], "info", "info");
  return out;
}

// What --min-severity and --gpu left out: "2 warnings hidden by
// --min-severity; 1 critical about other GPUs hidden by --gpu" ("" none).
std::string hidden_text(const DiagnoseResult& r) {
  std::string out;
  if (auto c = counts_text(r.hidden_by_severity); !c.empty())
    out = c + " hidden by --min-severity";
  if (auto c = counts_text(r.hidden_by_gpu); !c.empty())
    out += (out.empty() ? "" : "; ") + c + " about other GPUs hidden by --gpu";
  return out;
}

// "No critical findings about GPU 1" for what was asked.
std::string nothing_shown_text(const DiagnoseResult& r) {
  const std::string severity = r.min_severity == "critical"  ? "critical "
                               : r.min_severity == "warning" ? "warning or "
                                                               "critical "
                                                             : "";
  return fmt::format("No {}findings{}", severity,
                     r.gpus.empty() ? ""
                     : r.gpus.size() == 1
                         ? fmt::format(" about GPU {}", r.gpus[0])
                         : " about GPUs " + join_ints(r.gpus, ", "));
}

}  // namespace

std::string format_text_report(const DiagnoseResult& result,
                               const TraceHeader& header) {
  std::string out =
      "gpudoctor diagnose — " + window_line(result, header) + "\n";
  out += parts_lines(result.window);
  out += left_out_line(result.window);
  const std::string hidden = hidden_text(result);
  if (result.findings.empty() && !hidden.empty()) {
    // Never "no problem" while the filters hid some (issue: a user ran
    // --min-severity critical and read "No problem found").
    out += fmt::format("\n{}; {}.\n", nothing_shown_text(result), hidden);
    if (!result.not_judged.empty()) out += not_judged_lines(result);
    return out;
  }
  if (result.findings.empty() && !result.not_judged.empty()) {
    // Silence from rules that saw too little is not "all is well".
    auto judged = judged_ids(result);
    out += fmt::format(
        "\nNo problem found by the {} rules that judged this "
        "window; {} could not.\n",
        judged.size(), result.not_judged.size());
    out += not_judged_lines(result);
    out += fmt::format("Judged ({} rules): {}\n", judged.size(),
                       fmt::join(judged, ", "));
    return out;
  }
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
    out += fmt::format("\n{:<8}  {}  {}\n", upper(sentence_safe(f.severity)),
                       sentence_safe(f.id), sentence_safe(f.title));
    out += "  evidence: " + sentence_safe(f.evidence) + "\n";
    out += "  action:   " + sentence_safe(f.action) + "\n";
  }
  if (!result.not_judged.empty()) out += not_judged_lines(result);
  std::string not_judged =
      result.not_judged.empty()
          ? ""
          : fmt::format(", {} not judged", result.not_judged.size());
  out += fmt::format(
      "\n{} critical, {} warning{}, {} info ({} rules checked{}){}\n",
      counts[2], counts[1], counts[1] == 1 ? "" : "s", counts[0],
      result.rules_checked.size(), not_judged,
      hidden.empty() ? "" : "; " + hidden);
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
  if (!result.window.parts.empty()) {
    nlohmann::json parts = nlohmann::json::array();
    for (const auto& p : result.window.parts) {
      nlohmann::json part = {{"source", p.source}, {"samples", p.samples}};
      if (!p.url.empty()) part["url"] = p.url;
      part["start"] = p.samples ? nlohmann::json(p.start) : nullptr;
      part["end"] = p.samples ? nlohmann::json(p.end) : nullptr;
      parts.push_back(std::move(part));
    }
    window["parts"] = std::move(parts);
  }
  if (result.window.samples_with_processes_left_out > 0)
    window["processes_left_out"] = {
        {"samples", result.window.samples_with_processes_left_out},
        {"most_in_one_sample", result.window.most_processes_left_out}};
  nlohmann::json not_judged = nlohmann::json::array();
  for (const auto& n : result.not_judged)
    not_judged.push_back({{"id", n.id}, {"reason", n.reason}});
  auto by_severity = [](const std::array<size_t, 3>& c) {
    return nlohmann::json{
        {"critical", c[2]}, {"warning", c[1]}, {"info", c[0]}};
  };
  nlohmann::json doc = {
      {"findings", findings},
      {"window", window},
      {"checked", result.rules_checked},
      {"not_judged", not_judged},
      {"hidden",
       {{"min_severity", by_severity(result.hidden_by_severity)},
        {"gpu", by_severity(result.hidden_by_gpu)}}}};
  return doc.dump();
}

}  // namespace gd
