// `gpudoctor report --csv`: one row per group (RFC 4180). Text cells are
// terminal_safe (a newline in a name stays in its row) and a cell that a
// spreadsheet would read as a formula is prefixed with a quote.
#include <fmt/format.h>

#include "common/int_list.h"
#include "common/terminal_text.h"
#include "views/report_view.h"

namespace gd {
namespace {

using accounting::kJoulesPerKwh;

std::string cell(std::string_view text) {
  std::string safe = terminal_safe(text, 512);
  if (!safe.empty() &&
      (safe[0] == '=' || safe[0] == '+' || safe[0] == '-' || safe[0] == '@'))
    safe.insert(0, "'");
  std::string out = "\"";
  for (char c : safe) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string num(double v) { return fmt::format("{:.6f}", v); }

}  // namespace

std::string report_csv(const accounting::AccountReport& r,
                       const ReportViewOptions& o) {
  std::string out =
      "by,key,label,gpus,gpu_hours_held,busy_gpu_hours,sm_active_gpu_hours,"
      "idle_held_gpu_hours,mem_mean_pct,mem_peak_bytes,energy_kwh,"
      "energy_counter_kwh,energy_power_kwh,split";
  if (o.prices.any()) out += ",cost";
  if (o.findings) out += ",findings";
  // A fleet's report: the nodes each group held GPUs on ("n1 n2").
  const bool fleet = !r.gpus.empty() && !r.gpus.front().node.empty();
  if (fleet) out += ",nodes";
  out += "\n";
  for (const auto& row : r.by(o.by)) {
    const auto& u = row.usage;
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
        accounting::dimension_name(o.by), cell(row.key), cell(row.label),
        cell(join_ints(report_gpus(row.gpu_mask), " ")), num(u.held_s / 3600),
        num(u.busy_s / 3600),
        u.sm_measured_s > 0 ? num(u.sm_active_s / 3600) : "",
        num(u.idle_held_s / 3600),
        u.mem_time_s > 0
            ? fmt::format("{:.1f}", 100 * u.mem_frac_s / u.mem_time_s)
            : "",
        u.mem_peak_bytes, num(u.energy_j / kJoulesPerKwh),
        num(u.energy_counter_j / kJoulesPerKwh),
        num(u.energy_power_j / kJoulesPerKwh), report_split_text(u));
    if (o.prices.any()) out += fmt::format(",{:.4f}", o.prices.cost(u));
    if (o.findings) out += "," + cell(report_findings_text(row));
    if (fleet) {
      std::string nodes;
      for (const auto& n : row.nodes) nodes += (nodes.empty() ? "" : " ") + n;
      if (row.node_count > row.nodes.size())
        nodes += fmt::format(" +{}", row.node_count - row.nodes.size());
      out += "," + cell(nodes);
    }
    out += "\n";
  }
  return out;
}

}  // namespace gd
