// `gpudoctor report --json`: the window, the node, each GPU and each group,
// GPU-hours and kWh (with seconds and joules where a check adds them up),
// and the method behind each figure.
#include <nlohmann/json.hpp>

#include "accounting/node_totals.h"
#include "views/report_view.h"

namespace gd {
namespace {

using accounting::kJoulesPerKwh;
using Json = nlohmann::ordered_json;

double h(double s) { return s / 3600.0; }
double to_kwh(double j) { return j / kJoulesPerKwh; }

Json usage_json(const accounting::Usage& u, const ReportViewOptions& o) {
  Json j;
  j["gpu_hours_held"] = h(u.held_s);
  j["busy_gpu_hours"] = h(u.busy_s);
  // null: no GPM reading (the GPU has none, or it was not read).
  j["sm_active_gpu_hours"] =
      u.sm_measured_s > 0 ? Json(h(u.sm_active_s)) : Json(nullptr);
  j["sm_measured_gpu_hours"] = h(u.sm_measured_s);
  j["idle_held_gpu_hours"] = h(u.idle_held_s);
  j["mem_mean_pct"] = u.mem_time_s > 0
                          ? Json(100.0 * u.mem_frac_s / u.mem_time_s)
                          : Json(nullptr);
  j["mem_peak_bytes"] = u.mem_peak_bytes;
  j["energy_kwh"] = to_kwh(u.energy_j);
  j["energy_j"] = u.energy_j;
  j["energy_method"] = {{"counter_kwh", to_kwh(u.energy_counter_j)},
                        {"power_kwh", to_kwh(u.energy_power_j)}};
  j["split"] = {{"sm_gpu_hours", h(u.split_sm_s)},
                {"memory_gpu_hours", h(u.split_memory_s)},
                {"equal_gpu_hours", h(u.split_equal_s)}};
  if (o.prices.any()) j["cost"] = o.prices.cost(u);
  return j;
}

}  // namespace

std::string report_json(const accounting::AccountReport& r,
                        const ReportViewOptions& o) {
  Json doc;
  doc["source"] = o.source;
  doc["window"] = {{"start", r.start},
                   {"end", r.end},
                   {"samples", r.samples},
                   {"gap_s", r.gap_s}};
  doc["by"] = accounting::dimension_name(o.by);
  if (o.fleet_nodes > 0)
    doc["fleet"] = {{"nodes", o.fleet_nodes},
                    {"checked", o.fleet_nodes - o.not_checked.size()},
                    {"not_checked", o.not_checked}};
  if (o.prices.any())
    doc["prices"] = {
        {"kwh", o.prices.kwh ? Json(*o.prices.kwh) : Json(nullptr)},
        {"gpu_hour",
         o.prices.gpu_hour ? Json(*o.prices.gpu_hour) : Json(nullptr)}};

  const accounting::NodeTotals n = accounting::node_totals(r);
  Json node;
  node["gpus"] = n.gpus;
  node["gpu_hours_available"] = h(n.wall_s);
  node["gpu_hours_held"] = h(n.held_s);
  node["gpu_hours_unheld"] = h(n.unheld_s);
  node["gpu_hours_unattributed"] = h(n.unattributed_s);
  node["busy_gpu_hours"] = h(n.busy_s);
  node["sm_active_gpu_hours"] =
      n.sm_measured_s > 0 ? Json(h(n.sm_active_s)) : Json(nullptr);
  node["energy_kwh"] = to_kwh(n.energy_j);
  node["held_energy_kwh"] = to_kwh(n.held_energy_j);
  node["idle_energy_kwh"] = to_kwh(n.idle_energy_j);
  node["unattributed_energy_kwh"] = to_kwh(n.unattributed_energy_j);
  node["energy_method"] = {{"counter_kwh", to_kwh(n.energy_counter_j)},
                           {"power_kwh", to_kwh(n.energy_power_j)},
                           {"unmeasured_gpu_hours", h(n.unmeasured_s)}};
  node["counter_resets"] = n.counter_resets;
  node["gaps"] = n.gaps;
  if (o.prices.any()) node["cost"] = o.prices.cost(r.total);
  doc["node"] = node;

  Json gpus = Json::array();
  for (const auto& g : r.gpus) {
    gpus.push_back(
        {{"index", g.index},
         {"name", g.name},
         {"wall_hours", h(g.wall_s)},
         {"gpu_hours_held", h(g.held_s)},
         {"gpu_hours_unheld", h(g.unheld_s)},
         {"gpu_hours_unattributed", h(g.unattributed_s)},
         {"busy_gpu_hours", h(g.busy_s)},
         {"energy_kwh", to_kwh(g.energy_j)},
         {"energy_j", g.energy_j},
         {"held_energy_kwh", to_kwh(g.held_energy_j)},
         {"idle_energy_kwh", to_kwh(g.idle_energy_j)},
         {"unattributed_energy_kwh", to_kwh(g.unattributed_energy_j)},
         {"energy_counter_kwh", to_kwh(g.energy_counter_j)},
         {"energy_power_kwh", to_kwh(g.energy_power_j)},
         {"counter_resets", g.counter_resets},
         {"gaps", g.gaps}});
    if (!g.node.empty()) gpus.back()["node"] = g.node;
  }
  doc["gpus"] = gpus;

  Json groups = Json::array();
  for (const auto& row : r.by(o.by)) {
    Json g;
    g["key"] = row.key;
    g["label"] = row.label;
    g["other"] = row.folded;
    g["gpus"] = report_gpus(row.gpu_mask);
    if (row.node_count > 0) {  // a fleet's report
      g["nodes"] = row.nodes;
      g["node_count"] = row.node_count;
    }
    g["first"] = row.first_t;
    g["last"] = row.last_t;
    g.update(usage_json(row.usage, o));
    if (o.findings) {
      Json fs = Json::array();
      for (const auto& f : row.findings)
        fs.push_back({{"id", f.id},
                      {"severity", f.severity},
                      {"seconds", f.seconds},
                      {"share", f.share}});
      g["findings"] = std::move(fs);
    }
    groups.push_back(std::move(g));
  }
  doc["groups"] = groups;
  doc["groups_folded"] = r.groups_folded[static_cast<int>(o.by)];
  // Invalid UTF-8 in a name from the trace must not abort the dump.
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace gd
