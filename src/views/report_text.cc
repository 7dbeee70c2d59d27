// The text table of `gpudoctor report`, sorted by GPU-hours held, and the
// node's summary and per-GPU lines under it.
#include <fmt/format.h>

#include <algorithm>

#include "accounting/node_totals.h"
#include "common/int_list.h"
#include "common/terminal_text.h"
#include "common/time_point.h"
#include "views/format.h"
#include "views/report_view.h"

namespace gd {
namespace {

using accounting::AccountReport;
using accounting::GpuAccount;
using accounting::GroupRow;
using accounting::kJoulesPerKwh;
using accounting::Usage;

std::string hours(double s) { return fmt::format("{:.3f}", s / 3600.0); }
std::string kwh(double j) { return fmt::format("{:.3f}", j / kJoulesPerKwh); }

// Ends a table row: no padding left at the end of the line.
void end_row(std::string& out) {
  while (!out.empty() && out.back() == ' ') out.pop_back();
  out += "\n";
}

std::string pct(double part, double whole) {
  return whole > 0 ? fmt::format("{:.0f}%", 100.0 * part / whole) : "-";
}

std::string sm_active(const Usage& u) {
  return u.sm_measured_s > 0 ? hours(u.sm_active_s) : "not measured";
}

std::string memory(const Usage& u) {
  if (u.mem_peak_bytes == 0 && u.mem_time_s == 0) return kUnknown;
  std::string mean =
      u.mem_time_s > 0
          ? fmt::format("{:.0f}%", 100 * u.mem_frac_s / u.mem_time_s)
          : std::string(kUnknown);
  return mean + " / " + human_bytes_brief(u.mem_peak_bytes);
}

// The GPUS cell: a node's GPU indices, or in a fleet's report the node
// ("gpu-07") or how many nodes ("12 nodes").
std::string groups_gpus(const GroupRow& row) {
  if (row.node_count == 0) return join_ints(report_gpus(row.gpu_mask), ",");
  if (row.node_count == 1 && !row.nodes.empty()) return row.nodes.front();
  return fmt::format("{} nodes", row.node_count);
}

}  // namespace

std::string report_text(const AccountReport& r, const ReportViewOptions& o) {
  const char* by = accounting::dimension_name(o.by);
  std::string out =
      r.samples == 0
          ? fmt::format(
                "gpudoctor report: {}, no samples in the window, by {}\n\n",
                terminal_safe(o.source, 256), by)
          : fmt::format(
                "gpudoctor report: {}, {} .. {} ({} samples), by {}\n\n",
                terminal_safe(o.source, 256), local_text(r.start),
                local_text(r.end), r.samples, by);
  if (o.fleet_nodes > 0) {
    out += fmt::format("fleet: {} of {} nodes checked\n",
                       o.fleet_nodes - o.not_checked.size(), o.fleet_nodes);
    for (const std::string& why : o.not_checked)
      out += "  could not check " + terminal_safe(why, 300) + "\n";
    out += "\n";
  }
  const auto& rows = r.by(o.by);
  // A fleet's rows name their nodes, wider than a node's GPU indices.
  const bool fleet = !r.gpus.empty() && !r.gpus.front().node.empty();
  const size_t gpus_width = fleet ? 16 : 8;
  std::string head = by;
  for (char& c : head) c = static_cast<char>(c - ('a' - 'A'));
  // 32 columns, more (up to 64) for longer labels: a Slurm job reads
  // "slurm 1234 train-llm (alice, gpu-a)".
  size_t label_width = 32;
  for (const GroupRow& row : rows)
    label_width = std::max(
        label_width,
        std::min<size_t>(64, terminal_width(terminal_safe(row.label))));
  out += terminal_cell(head, label_width) +
         fmt::format(
             " {:<{}} {:>10} {:>10} {:>15} {:>10} {:>18} {:>10} "
             "{:<10}",
             fleet ? "NODES" : "GPUS", gpus_width, "HELD GPU-h", "BUSY GPU-h",
             "SM-ACTIVE GPU-h", "IDLE-HELD", "MEM mean/peak", "ENERGY kWh",
             "SPLIT");
  if (o.prices.any()) out += fmt::format(" {:>10}", "COST");
  end_row(out);
  for (const GroupRow& row : rows) {
    std::string label = row.label;
    if (row.folded) {
      const size_t n = r.groups_folded[static_cast<int>(o.by)];
      label = fmt::format("other ({}{} more)", n,
                          n >= accounting::kFoldedCountMax ? "+" : "");
    }
    out += terminal_cell(label, label_width) +
           fmt::format(
               " {:<{}} {:>10} {:>10} {:>15} {:>10} {:>18} {:>10} "
               "{:<10}",
               terminal_fit(groups_gpus(row), gpus_width), gpus_width,
               hours(row.usage.held_s), hours(row.usage.busy_s),
               sm_active(row.usage), hours(row.usage.idle_held_s),
               memory(row.usage), kwh(row.usage.energy_j),
               report_split_text(row.usage));
    if (o.prices.any())
      out += fmt::format(" {:>10.2f}", o.prices.cost(row.usage));
    end_row(out);
  }
  if (rows.empty()) out += "(no GPU was held in this window)\n";

  if (o.findings) {
    out += "\nfindings (share of each one's time):\n";
    bool any = false;
    for (const GroupRow& row : rows) {
      if (row.findings.empty()) continue;
      any = true;
      out += "  " + terminal_fit(row.label, 40) + ": " +
             terminal_safe(report_findings_text(row)) + "\n";
    }
    if (!any) out += "  none names a process of these groups\n";
  }

  const accounting::NodeTotals n = accounting::node_totals(r);
  out += fmt::format(
      "\n{}: {} GPUs, {} GPU-h available: held {} ({}), busy {}, "
      "SM-active {}; unheld {}, unattributed {} ({} gap{})\n",
      fleet ? "fleet" : "node", n.gpus, hours(n.wall_s), hours(n.held_s),
      pct(n.held_s, n.wall_s), hours(n.busy_s),
      n.sm_measured_s > 0 ? hours(n.sm_active_s) : "not measured",
      hours(n.unheld_s), hours(n.unattributed_s), n.gaps,
      n.gaps == 1 ? "" : "s");
  out += fmt::format(
      "energy: {} kWh: held {}, idle GPUs {} (nobody held them), "
      "unattributed {}",
      kwh(n.energy_j), kwh(n.held_energy_j), kwh(n.idle_energy_j),
      kwh(n.unattributed_energy_j));
  if (o.prices.any())
    out += fmt::format("; cost {:.2f}", o.prices.cost(r.total));
  out += "\n";
  if (n.energy_power_j > 0)
    out += fmt::format(
        "energy method: counter {} kWh, power x time {} kWh on {} GPU(s) "
        "without an energy counter\n",
        kwh(n.energy_counter_j), kwh(n.energy_power_j), n.gpus_without_counter);
  else
    out += "energy method: the GPUs' energy counters\n";
  if (n.counter_resets > 0)
    out += fmt::format("energy counter reset {} time(s) (driver reload)\n",
                       n.counter_resets);
  if (n.unmeasured_s > 0)
    out +=
        fmt::format("no energy reading for {} GPU-h\n", hours(n.unmeasured_s));
  if (n.gaps > 0)
    out += fmt::format(
        "gaps: intervals over {:.0f} s between samples are not attributed to "
        "anyone\n",
        r.gap_s);

  const size_t gpu_width = fleet ? 24 : 4;  // "node/index" in a fleet's
  out += fmt::format(
      "\n{:<{}} WALL h    HELD h  UNHELD h  UNATTR h  ENERGY kWh  IDLE kWh  "
      "UNATTR kWh\n",
      "GPU", gpu_width);
  for (const GpuAccount& g : r.gpus)
    out +=
        fmt::format("{:<{}} {:>6} {:>9} {:>9} {:>9} {:>11} {:>9} {:>11}\n",
                    g.node.empty() ? std::to_string(g.index)
                                   : terminal_fit(g.node, gpu_width - 4) + "/" +
                                         std::to_string(g.index),
                    gpu_width, hours(g.wall_s), hours(g.held_s),
                    hours(g.unheld_s), hours(g.unattributed_s), kwh(g.energy_j),
                    kwh(g.idle_energy_j), kwh(g.unattributed_energy_j));
  return out;
}

}  // namespace gd
