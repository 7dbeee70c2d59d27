#include "serve/fleet_json.h"

#include <map>

#include "common/text_cap.h"
#include "monitor/fleet_rows.h"
#include "promsource/fleet_state.h"
#include "trace/json_out.h"

namespace gd {
namespace {

namespace jo = json_out;
using monitor::FleetFrame;
using monitor::FleetNodeState;

void fleet_text(std::string& out, std::string s) {
  cap_text(s, kMaxFleetText);
  jo::string(out, s);
}

void fleet_text_or_null(std::string& out, const std::string& s) {
  if (s.empty())
    jo::null(out);
  else
    fleet_text(out, s);
}

// A Unix time, null while there is none yet (0: no round ended, the node
// never seen).
void time_or_null(std::string& out, double t) {
  if (t > 0)
    jo::number(out, t);
  else
    jo::null(out);
}

// One GPU cell: its index, util, memory used and total, hottest
// temperature, power ("null" where unknown).
struct GpuCell {
  std::optional<double> util_pct, power_w;
  std::optional<uint64_t> mem_used_bytes, mem_total_bytes;
  std::optional<int> temp_c;
};

// The node's GPUs by index: those with a value this round and those its
// header lists (a GPU known without values is shown unknown).
std::map<int, GpuCell> gpu_cells(const FleetNodeState& n) {
  std::map<int, GpuCell> cells;
  for (const auto& info : n.data.header.gpus)
    cells[info.index].mem_total_bytes = info.memory_total_bytes;
  for (const auto& g : n.data.sample.gpus) {
    GpuCell& c = cells[g.index];
    c.util_pct = g.util_pct;
    c.mem_used_bytes = g.mem_used_bytes;
    c.temp_c = g.temp_c;
    c.power_w = g.power_w;
  }
  return cells;
}

void append_gpus(std::string& out, const FleetNodeState& n) {
  out += '[';
  bool first = true;
  for (const auto& [index, c] : gpu_cells(n)) {
    if (!first) out += ',';
    first = false;
    jo::lit(out, "{\"index\":");
    jo::integer(out, index);
    jo::lit(out, ",\"util_pct\":");
    jo::value(out, c.util_pct);
    jo::lit(out, ",\"mem_used_bytes\":");
    jo::value(out, c.mem_used_bytes);
    jo::lit(out, ",\"mem_total_bytes\":");
    jo::value(out, c.mem_total_bytes);
    jo::lit(out, ",\"temp_c\":");
    jo::value(out, c.temp_c);
    jo::lit(out, ",\"power_w\":");
    jo::value(out, c.power_w);
    out += '}';
  }
  out += ']';
}

void append_findings(std::string& out, const FleetNodeState& n) {
  const auto& all = n.judged.findings;
  out += '[';
  for (size_t i = 0; i < all.size() && i < kMaxFleetFindingsShown; ++i) {
    const Finding& f = all[i].finding;
    if (i) out += ',';
    jo::lit(out, "{\"id\":");
    fleet_text(out, f.id);
    jo::lit(out, ",\"severity\":");
    fleet_text(out, f.severity);
    jo::lit(out, ",\"gpus\":[");
    for (size_t g = 0; g < f.gpus.size(); ++g) {
      if (g) out += ',';
      jo::integer(out, f.gpus[g]);
    }
    jo::lit(out, "],\"summary\":");
    fleet_text(out, f.title);
    jo::lit(out, ",\"evidence\":");
    fleet_text(out, f.evidence);
    out += '}';
  }
  out += ']';
}

void append_not_judged(std::string& out, const FleetNodeState& n) {
  const auto& all = n.judged.not_judged;
  out += '[';
  for (size_t i = 0; i < all.size() && i < kMaxFleetFindingsShown; ++i) {
    if (i) out += ',';
    jo::lit(out, "{\"id\":");
    fleet_text(out, all[i].id);
    jo::lit(out, ",\"reason\":");
    fleet_text(out, all[i].reason);
    out += '}';
  }
  out += ']';
}

void append_node(std::string& out, const monitor::FleetRow& r) {
  const FleetNodeState& n = *r.node;
  jo::lit(out, "{\"name\":");
  fleet_text(out, n.data.node);
  jo::lit(out, ",\"status\":");
  jo::string(out, monitor::node_status_name(r.status));
  jo::lit(out, ",\"age_s\":");
  if (n.data.last_seen > 0)
    jo::number(out, r.age_s);
  else
    jo::null(out);
  jo::lit(out, ",\"last_seen\":");
  time_or_null(out, n.data.last_seen);
  jo::lit(out, ",\"dashboard\":");
  fleet_text_or_null(out, serve_dashboard_url(n.data.serve_instance));
  jo::lit(out, ",\"error\":");
  fleet_text_or_null(out, n.data.error);
  jo::lit(out, ",\"gpus\":");
  append_gpus(out, n);
  jo::lit(out, ",\"worst_id\":");
  fleet_text_or_null(out, r.worst_id);
  jo::lit(out, ",\"worst_severity\":");
  fleet_text_or_null(out, r.worst_severity);
  jo::lit(out, ",\"findings_count\":");
  jo::unsigned_integer(out, r.findings);
  jo::lit(out, ",\"findings\":");
  append_findings(out, n);
  jo::lit(out, ",\"not_judged\":");
  append_not_judged(out, n);
  // What the window rules judged: its scrapes and their span.
  jo::lit(out, ",\"window_samples\":");
  jo::unsigned_integer(out, n.window_samples);
  jo::lit(out, ",\"window_span_s\":");
  jo::number(out, n.window_span_s);
  out += '}';
}

}  // namespace

std::string serve_dashboard_url(const std::string& serve_instance) {
  // Checked where read; checked again, as the link goes into a page.
  const std::string checked = promsource::serve_instance_of(serve_instance);
  if (checked.empty()) return {};
  return "http://" + checked + "/";
}

std::string fleet_json(const FleetFrame& f, double now) {
  const auto rows = monitor::fleet_rows(f, "", now);
  std::string out;
  out.reserve(256 + rows.size() * 512);
  jo::lit(out, "{\"source\":");
  fleet_text(out, f.source);
  jo::lit(out, ",\"interval_s\":");
  jo::number(out, f.interval_s);
  jo::lit(out, ",\"t\":");
  time_or_null(out, f.t);
  jo::lit(out, ",\"round_s\":");
  jo::number(out, f.round_s);
  jo::lit(out, ",\"error\":");
  fleet_text_or_null(out, f.error);
  jo::lit(out, ",\"stale_after_s\":");
  jo::number(out, monitor::fleet_stale_after_s(f));
  jo::lit(out, ",\"nodes_left_out\":");
  jo::unsigned_integer(out, f.nodes_left_out);
  jo::lit(out, ",\"series_unnamed\":");
  jo::unsigned_integer(out, f.series_unnamed);
  jo::lit(out, ",\"window_note\":");
  fleet_text_or_null(out, f.window_note);
  jo::lit(out, ",\"nodes\":[");
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i) out += ',';
    append_node(out, rows[i]);
  }
  jo::lit(out, "]}");
  return out;
}

std::string fleet_event(const FleetFrame& f) {
  std::string out = "event: fleet\ndata: {\"seq\":";
  jo::unsigned_integer(out, f.seq);
  jo::lit(out, ",\"t\":");
  time_or_null(out, f.t);
  jo::lit(out, ",\"round_s\":");
  jo::number(out, f.round_s);
  jo::lit(out, ",\"error\":");
  fleet_text_or_null(out, f.error);
  jo::lit(out, ",\"nodes\":");
  jo::unsigned_integer(out, f.nodes.size());
  jo::lit(out, "}\n\n");
  return out;
}

}  // namespace gd
