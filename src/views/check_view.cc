#include "views/check_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/int_list.h"
#include "common/terminal_text.h"
#include "common/time_point.h"
#include "diagnose/finding_json.h"
#include "model/gpu_lookup.h"

namespace gd {
namespace {

const char* status_word(int code) {
  switch (code) {
    case check::kExitHealthy:
      return "healthy";
    case check::kExitWarnings:
      return "warnings";
    default:
      return "unhealthy";
  }
}

// Printable ASCII, no double quote (the reason goes into
// `scontrol update ... reason="..."` and a syslog line): anything else
// becomes '?', a double quote a single one.
std::string reason_safe(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '"')
      out += '\'';
    else
      out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  return out;
}

size_t count_severity(const check::Result& r, std::string_view severity) {
  size_t n = 0;
  for (const auto& c : r.findings) n += c.finding.severity == severity;
  return n;
}

}  // namespace

namespace {

// The worst finding as one line: `prefix`, where, what, when, "+N more".
std::string reason_line(const check::Result& r, const TraceHeader& header,
                        std::string_view prefix, size_t max) {
  max = std::max(max, kCheckLineMin);
  const check::CheckFinding& worst = r.findings.front();
  std::string where;
  if (!worst.finding.gpus.empty()) {
    int gpu = worst.finding.gpus.front();
    const GpuInfo* info = find_gpu_info(header, gpu);
    where = fmt::format(
        "GPU {} {}", gpu,
        info && !info->pci_bus_id.empty() ? info->pci_bus_id + " " : "");
  }
  std::string more;
  if (r.findings.size() > 1)
    more = fmt::format("; +{} more", r.findings.size() - 1);
  // A kernel-log event carries its time (UTC), kept whole when the rest is
  // cut: "which Xid" is told apart by when it came.
  std::string when;
  if (std::string t = utc_hms(worst.logged_at); !t.empty()) when = " " + t;
  std::string line = reason_safe(std::string(prefix) + where + worst.brief);
  // kCheckLineMin leaves room for the prefix, the time and the count.
  const size_t tail = when.size() + more.size();
  if (line.size() + tail > max) line.resize(max - tail - 3), line += "...";
  return line + when + more;
}

std::string fit(std::string line, size_t max) {
  max = std::max(max, kCheckLineMin);
  if (line.size() > max) line.resize(max - 3), line += "...";
  return line;
}

}  // namespace

std::string check_reason(const check::Result& r, const TraceHeader& header,
                         size_t max) {
  if (r.findings.empty()) return "";
  return reason_line(r, header, "gpudoctor: ", max);
}

NpdVerdict check_npd(const check::Result& r, const TraceHeader& header,
                     size_t max, bool warnings_are_problems) {
  const size_t n = header.gpus.size();
  if (r.findings.empty())
    return {kNpdOk, fit(fmt::format("gpudoctor: {} GPU{} healthy", n,
                                    n == 1 ? "" : "s"),
                        max)};
  const bool critical = r.exit_code() == check::kExitUnhealthy;
  if (critical || warnings_are_problems)
    return {kNpdProblem, reason_line(r, header, "gpudoctor: ", max)};
  // Warnings only, and they are not the condition's business: OK, with
  // the worst warning in the message for whoever reads it.
  return {kNpdOk, reason_line(r, header, "gpudoctor: OK; warning: ", max)};
}

NpdVerdict check_npd_unknown(std::string_view why, size_t max) {
  return {
      kNpdUnknown,
      fit(reason_safe("gpudoctor: could not check: " + std::string(why)), max)};
}

std::string format_check_text(const check::Result& r,
                              const TraceHeader& header) {
  const int code = r.exit_code();
  std::string out = fmt::format(
      "gpudoctor check: {} (exit {}): {} problem{}, {} warning{} on {} GPU{}",
      status_word(code), code, count_severity(r, "critical"),
      count_severity(r, "critical") == 1 ? "" : "s",
      count_severity(r, "warning"),
      count_severity(r, "warning") == 1 ? "" : "s", header.gpus.size(),
      header.gpus.size() == 1 ? "" : "s");
  if (r.node_only)
    out += "; the node's health only (--gpus none)\n";
  else
    out += fmt::format("; the job's GPU{}: {}\n", r.gpus.size() == 1 ? "" : "s",
                       r.gpus.empty() ? "none listed" : join_ints(r.gpus));
  for (const auto& c : r.findings) {
    const Finding& f = c.finding;
    out += fmt::format("  {:<8} {}: {}\n", f.severity, f.id,
                       terminal_safe(f.title));
    out += fmt::format("           {}\n", terminal_safe(f.evidence));
    out += fmt::format("           fix: {}\n", terminal_safe(f.action));
  }
  if (!r.not_judged.empty()) {
    out += "Not judged:\n";
    for (const auto& n : r.not_judged)
      out += fmt::format("  {}: {}\n", n.id, terminal_safe(n.reason));
  }
  return out;
}

std::string format_check_json(const check::Result& r,
                              const TraceHeader& header) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& c : r.findings) {
    nlohmann::json j = finding_to_json(c.finding);
    j["reason"] = c.brief;
    findings.push_back(std::move(j));
  }
  nlohmann::json not_judged = nlohmann::json::array();
  for (const auto& n : r.not_judged)
    not_judged.push_back({{"id", n.id}, {"reason", n.reason}});
  std::string reason = check_reason(r, header);
  nlohmann::json j = {{"healthy", r.healthy()},
                      {"status", status_word(r.exit_code())},
                      {"exit_code", r.exit_code()},
                      {"gpus", r.gpus},
                      {"node_only", r.node_only},
                      {"findings", std::move(findings)},
                      {"not_judged", std::move(not_judged)},
                      {"checked", r.checked},
                      {"reason", reason.empty() ? nlohmann::json(nullptr)
                                                : nlohmann::json(reason)}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

}  // namespace gd
