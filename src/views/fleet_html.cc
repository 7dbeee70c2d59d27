#include "views/fleet_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/html_text.h"

namespace gd {
namespace {

struct ChartKind {
  const char* key;
  const char* title;
};
// The charts in the order a node shows them.
constexpr ChartKind kKinds[] = {
    {"util", "GPU utilisation (%)"},
    {"temp", "GPU temperature (°C)"},
    {"clock", "SM clock (MHz)"},
    {"power", "GPU power (W)"},
    {"mem", "GPU memory used (GiB)"},
    {"pcie", "PCIe rx + tx (MB/s)"},
    {"cpu", "Host CPU (%)"},
    {"swap", "Host memory (GiB)"},
    {"disk", "Disk (%)"},
};

// Finding id -> the charts of the series its evidence is about.
const std::map<std::string, std::vector<std::string>>& charts_by_id() {
  static const std::map<std::string, std::vector<std::string>> m{
      {"thermal-throttling", {"temp", "clock"}},
      {"thermal-outlier", {"temp", "clock"}},
      {"power-capping", {"power", "clock"}},
      {"power-brake", {"power", "clock"}},
      {"memory-leak", {"mem"}},
      {"memory-pressure", {"mem", "swap"}},
      {"memory-underused", {"mem", "util"}},
      {"orphaned-memory", {"mem"}},
      {"pcie-link-degraded", {"pcie"}},
      {"pcie-aer-errors", {"pcie"}},
      {"input-bound", {"util", "cpu"}},
      {"io-bound", {"util", "disk"}},
      {"cpu-contention", {"util", "cpu"}},
      {"host-swapping", {"swap"}},
      {"host-oom-kill", {"swap"}},
  };
  return m;
}

int rank(const std::string& severity) {
  if (severity == "critical") return 3;
  if (severity == "warning") return 2;
  if (severity == "info") return 1;
  return 0;
}

const char* severity_name(int r) {
  static const char* names[] = {"none", "info", "warning", "critical"};
  return names[std::clamp(r, 0, 3)];
}

bool has_span(const Finding& f) { return f.start > 0 && f.end >= f.start; }

std::string utc(double t) {
  const std::time_t s = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string gpus_text(const std::vector<int>& gpus) {
  std::string out;
  for (int g : gpus) out += (out.empty() ? "" : ",") + std::to_string(g);
  return out;
}

// Inlined library text: nothing in it may end its element early.
std::string inline_safe(std::string_view text, std::string_view end_tag) {
  std::string out(text);
  const std::string needle = "</" + std::string(end_tag);
  for (size_t at = 0; (at = out.find(needle, at)) != std::string::npos;)
    out.replace(at, 2, "<\\/"), at += 3;
  return out;
}

constexpr const char* kCss = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1d2330;background:#fff}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
.meta{color:#555}
table{border-collapse:collapse}
#heatmap td{width:7px;height:14px;padding:0;border:0}
#heatmap th{text-align:left;padding:0 .6em 0 0;font-weight:normal;white-space:nowrap;max-width:22em;overflow:hidden;text-overflow:ellipsis}
#heatmap .axis{font-size:11px;color:#666}
.s0{background:#e6efe6}.s1{background:#9ecae1}.s2{background:#f4b942}.s3{background:#d7301f}
.x{background:#bbb}
.w{background-image:repeating-linear-gradient(45deg,transparent 0 2px,rgba(255,255,255,.45) 2px 4px)}
.legend span.sw{display:inline-block;width:14px;height:12px;vertical-align:middle;margin:0 .3em 0 1em}
#findings td,#findings th{border-bottom:1px solid #ddd;padding:.3em .6em;text-align:left;vertical-align:top}
#findings .ev{color:#555;font-size:12px}
.sev-critical .sev{color:#b3200f;font-weight:bold}.sev-warning .sev{color:#a86a00;font-weight:bold}
.node{margin-top:1.2em}.charts{display:flex;flex-wrap:wrap;gap:1em}
.chart{border:1px solid #e3e3e3;padding:4px}
)";

constexpr const char* kJs = R"(
(function(){
  var el=document.getElementById('gd-chart-data');
  if(!el||typeof uPlot==='undefined')return;
  var nodes=JSON.parse(el.textContent);
  var colors=['#1f77b4','#d62728','#2ca02c','#ff7f0e','#9467bd','#8c564b','#e377c2','#7f7f7f','#bcbd22','#17becf'];
  nodes.forEach(function(node){
    var box=document.querySelector('.charts[data-node-index="'+node.i+'"]');
    if(!box)return;
    node.charts.forEach(function(c){
      var div=document.createElement('div');
      div.className='chart';
      div.setAttribute('data-chart',c.key);
      box.appendChild(div);
      var series=[{}];
      c.labels.forEach(function(l,k){series.push({label:l,stroke:colors[k%colors.length],width:1.5});});
      new uPlot({title:c.title,width:540,height:210,series:series,scales:{x:{time:true}}},[c.t].concat(c.values),div);
    });
  });
})();
)";

}  // namespace

std::vector<std::string> fleet_chart_keys(const std::vector<Finding>& f) {
  std::set<std::string> want;
  for (const auto& x : f) {
    auto it = charts_by_id().find(x.id);
    if (it == charts_by_id().end())
      want.insert("util");
    else
      want.insert(it->second.begin(), it->second.end());
  }
  std::vector<std::string> out;
  for (const auto& k : kKinds)
    if (want.count(k.key)) out.push_back(k.key);
  return out;
}

FleetChartBuilder::FleetChartBuilder(double start, double end,
                                     std::vector<std::string> keys)
    : start_(start), end_(end), seen_(kFleetChartPoints, false) {
  for (auto& k : keys) charts_.push_back({std::move(k), {}, {}});
}

void FleetChartBuilder::put(Chart& c, size_t slot, const std::string& label,
                            size_t bucket, double v) {
  if (!std::isfinite(v)) return;
  if (c.series.size() <= slot) {
    c.series.resize(slot + 1);
    c.labels.resize(slot + 1);
  }
  Acc& a = c.series[slot];
  if (a.sum.empty()) {
    a.sum.assign(kFleetChartPoints, 0);
    a.n.assign(kFleetChartPoints, 0);
    c.labels[slot] = label;
  }
  a.sum[bucket] += v;
  ++a.n[bucket];
}

void FleetChartBuilder::add(const Sample& s) {
  if (charts_.empty()) return;
  const double span = end_ - start_;
  double at = span > 0 ? (s.t - start_) / span : 0;
  const size_t b = static_cast<size_t>(std::clamp(
      std::floor(at * kFleetChartPoints), 0.0, kFleetChartPoints - 1.0));
  seen_[b] = true;
  constexpr double GiB = 1024.0 * 1024 * 1024;
  for (Chart& c : charts_) {
    const std::string& k = c.key;
    if (k == "cpu") {
      if (s.host.cpu_util_pct) put(c, 0, "busy", b, *s.host.cpu_util_pct);
      if (s.host.cpu_iowait_pct) put(c, 1, "iowait", b, *s.host.cpu_iowait_pct);
      if (s.host.cpu_steal_pct) put(c, 2, "steal", b, *s.host.cpu_steal_pct);
      continue;
    }
    if (k == "swap") {
      if (s.host.swap_used_bytes)
        put(c, 0, "swap used", b, *s.host.swap_used_bytes / GiB);
      if (s.host.mem_available_bytes)
        put(c, 1, "memory available", b, *s.host.mem_available_bytes / GiB);
      continue;
    }
    if (k == "disk") {
      if (s.host.disk_busy_pct)
        put(c, 0, "disk busy", b, *s.host.disk_busy_pct);
      if (s.host.cpu_iowait_pct) put(c, 1, "iowait", b, *s.host.cpu_iowait_pct);
      continue;
    }
    for (const GpuSample& g : s.gpus) {
      if (g.lost || g.stale || g.index < 0 ||
          static_cast<size_t>(g.index) >= kFleetChartGpus)
        continue;
      const size_t slot = static_cast<size_t>(g.index);
      const std::string label = "GPU " + std::to_string(g.index);
      if (k == "util" && g.util_pct) put(c, slot, label, b, *g.util_pct);
      if (k == "temp" && g.temp_c) put(c, slot, label, b, *g.temp_c);
      if (k == "clock" && g.sm_clock_mhz)
        put(c, slot, label, b, *g.sm_clock_mhz);
      if (k == "power" && g.power_w) put(c, slot, label, b, *g.power_w);
      if (k == "mem" && g.mem_used_bytes)
        put(c, slot, label, b, *g.mem_used_bytes / GiB);
      if (k == "pcie" && (g.pcie_rx_bytes_per_s || g.pcie_tx_bytes_per_s))
        put(c, slot, label, b,
            (static_cast<double>(g.pcie_rx_bytes_per_s.value_or(0)) +
             static_cast<double>(g.pcie_tx_bytes_per_s.value_or(0))) /
                1e6);
    }
  }
}

FleetNodeCharts FleetChartBuilder::take() {
  FleetNodeCharts out;
  const double width = (end_ - start_) / kFleetChartPoints;
  std::vector<size_t> used;
  for (size_t b = 0; b < kFleetChartPoints; ++b)
    if (seen_[b]) used.push_back(b);
  for (Chart& c : charts_) {
    FleetChart fc;
    fc.key = c.key;
    for (const auto& k : kKinds)
      if (c.key == k.key) fc.title = k.title;
    for (size_t b : used) fc.t.push_back(start_ + (b + 0.5) * width);
    for (size_t slot = 0; slot < c.series.size(); ++slot) {
      const Acc& a = c.series[slot];
      if (a.sum.empty()) continue;
      std::vector<double> v;
      v.reserve(used.size());
      for (size_t b : used)
        v.push_back(a.n[b] ? a.sum[b] / a.n[b] : std::nan(""));
      fc.labels.push_back(c.labels[slot]);
      fc.values.push_back(std::move(v));
    }
    if (!fc.values.empty()) out.charts.push_back(std::move(fc));
  }
  charts_.clear();
  return out;
}

FleetHeatRow fleet_heat_row(const FleetNodeOutcome& node, double start,
                            double end) {
  FleetHeatRow row{std::vector<int>(kFleetHeatBuckets, 0),
                   std::vector<bool>(kFleetHeatBuckets, false)};
  const double span = end - start;
  auto bucket = [&](double t) {
    const double at = span > 0 ? (t - start) / span : 0;
    return static_cast<size_t>(std::clamp(std::floor(at * kFleetHeatBuckets),
                                          0.0, kFleetHeatBuckets - 1.0));
  };
  for (const Finding& f : node.findings) {
    const int r = rank(f.severity);
    const bool spanned = has_span(f) && span > 0;
    const size_t b0 = spanned ? bucket(f.start) : 0;
    const size_t b1 = spanned ? bucket(f.end) : kFleetHeatBuckets - 1;
    for (size_t b = b0; b <= b1; ++b) {
      if (r > row.severity[b]) {
        row.severity[b] = r;
        row.spanless[b] = !spanned;
      } else if (r == row.severity[b] && spanned) {
        row.spanless[b] = false;  // a spanned finding says it is here
      }
    }
  }
  return row;
}

std::string format_fleet_html(const FleetHtmlInput& in) {
  static const std::vector<FleetNodeOutcome> none;
  const auto& nodes = in.nodes ? *in.nodes : none;
  std::string o;
  o.reserve(64 * 1024 + in.uplot_js.size() + nodes.size() * 2048);
  size_t checked = 0;
  for (const auto& n : nodes) checked += n.checked;

  o += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  // Nothing may be fetched: not by the page, not by anything injected.
  o += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
       "'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
       "img-src data:\">\n";
  o += "<title>gpudoctor fleet diagnosis</title>\n<style>";
  o += inline_safe(in.uplot_css, "style");
  o += "</style>\n<style>";
  o += kCss;
  o += "</style>\n</head><body>\n<h1>gpudoctor fleet diagnosis</h1>\n";
  o += fmt::format(
      "<p class=\"meta\">{} &middot; {} to {} &middot; nodes checked: {} of "
      "{}</p>\n",
      html_text(in.server), utc(in.start), utc(in.end), checked, nodes.size());

  // The heat map.
  std::set<std::string> spanless_ids;
  for (const auto& n : nodes)
    for (const auto& f : n.findings)
      if (!has_span(f)) spanless_ids.insert(f.id);
  o += "<h2>Worst severity per node over time</h2>\n<p class=\"legend\">";
  for (int r = 0; r <= 3; ++r)
    o += fmt::format("<span class=\"sw s{}\"></span>{}", r,
                     r ? severity_name(r) : "no finding");
  o += "<span class=\"sw x\"></span>could not check";
  o += "<span class=\"sw s2 w\"></span>hatched: from a finding with no time "
       "span, coloured over the whole window";
  if (!spanless_ids.empty()) {
    o += " (";
    bool first = true;
    for (const auto& id : spanless_ids) {
      o += (first ? "" : ", ") + html_text(id, 128);
      first = false;
    }
    o += ")";
  }
  o += fmt::format(". {} buckets of {:.0f} s.</p>\n", kFleetHeatBuckets,
                   (in.end - in.start) / kFleetHeatBuckets);
  o += fmt::format(
      "<table id=\"heatmap\"><thead><tr><th></th><th class=\"axis\" "
      "colspan=\"{}\">{} &rarr; {}</th></tr></thead><tbody>\n",
      kFleetHeatBuckets, utc(in.start), utc(in.end));
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    const std::string name = html_text(n.node, 512);
    o += fmt::format(
        "<tr class=\"heat-row\" data-node-index=\"{}\"><th title=\"{}\"><a "
        "href=\"#node-{}\">{}</a></th>",
        i, name, i, name);
    if (!n.checked) {
      for (size_t b = 0; b < kFleetHeatBuckets; ++b)
        o += "<td class=\"x\"></td>";
    } else {
      const FleetHeatRow row = fleet_heat_row(n, in.start, in.end);
      for (size_t b = 0; b < kFleetHeatBuckets; ++b)
        o += fmt::format("<td class=\"s{}{}\"></td>", row.severity[b],
                         row.spanless[b] ? " w" : "");
    }
    o += "</tr>\n";
  }
  o += "</tbody></table>\n";

  // The findings, most severe first.
  struct Row {
    size_t node;
    const Finding* f;
  };
  std::vector<Row> rows;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& f : nodes[i].findings) rows.push_back({i, &f});
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    const int ra = rank(a.f->severity), rb = rank(b.f->severity);
    if (ra != rb) return ra > rb;
    if (nodes[a.node].node != nodes[b.node].node)
      return nodes[a.node].node < nodes[b.node].node;
    return a.f->id < b.f->id;
  });
  o += fmt::format("<h2>Findings ({})</h2>\n", rows.size());
  o += "<table id=\"findings\"><thead><tr><th>node</th><th>id</th>"
       "<th>severity</th><th>GPUs</th><th>finding</th><th>action</th></tr>"
       "</thead><tbody>\n";
  for (const Row& r : rows) {
    const Finding& f = *r.f;
    const std::string sev = severity_name(rank(f.severity));
    o += fmt::format(
        "<tr class=\"finding sev-{}\" data-node-index=\"{}\"><td><a "
        "href=\"#node-{}\">{}</a></td><td class=\"id\">{}</td><td "
        "class=\"sev\">{}</td><td>{}</td><td>{}<div class=\"ev\">{}</div>"
        "</td><td>{}</td></tr>\n",
        sev, r.node, r.node, html_text(nodes[r.node].node, 512),
        html_text(f.id, 128), html_text(f.severity, 32),
        html_escape(gpus_text(f.gpus)), html_text(f.title),
        html_text(f.evidence, 4 * 4096), html_text(f.action));
  }
  o += "</tbody></table>\n";

  std::vector<size_t> failed;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!nodes[i].checked) failed.push_back(i);
  if (!failed.empty()) {
    o += fmt::format("<h2>Could not check ({})</h2>\n<ul id=\"not-checked\">",
                     failed.size());
    for (size_t i : failed)
      o += fmt::format("<li id=\"node-{}\">{}: {}</li>\n", i,
                       html_text(nodes[i].node, 512),
                       html_text(nodes[i].why_not));
    o += "</ul>\n";
  }

  // Per node, the charts behind its findings.
  static const std::vector<FleetNodeCharts> no_charts;
  const auto& charts = in.charts ? *in.charts : no_charts;
  nlohmann::json data = nlohmann::json::array();
  o += "<h2>Nodes</h2>\n";
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!nodes[i].checked) continue;
    const bool drawn = i < charts.size() && !charts[i].charts.empty();
    o += fmt::format(
        "<section class=\"node\" id=\"node-{}\"><h3>{}</h3>{}<div "
        "class=\"charts\" data-node-index=\"{}\"></div></section>\n",
        i, html_text(nodes[i].node, 512),
        nodes[i].findings.empty() ? "<p class=\"meta\">no findings</p>" : "",
        i);
    if (!drawn) continue;
    nlohmann::json cs = nlohmann::json::array();
    for (const FleetChart& c : charts[i].charts) {
      nlohmann::json t = nlohmann::json::array(),
                     vals = nlohmann::json::array();
      for (double x : c.t) t.push_back(std::llround(x));
      for (const auto& series : c.values) {
        nlohmann::json v = nlohmann::json::array();
        for (double x : series)
          v.push_back(std::isfinite(x)
                          ? nlohmann::json(std::round(x * 100) / 100)
                          : nlohmann::json(nullptr));
        vals.push_back(std::move(v));
      }
      cs.push_back({{"key", c.key},
                    {"title", c.title},
                    {"t", std::move(t)},
                    {"labels", c.labels},
                    {"values", std::move(vals)}});
    }
    data.push_back({{"i", i}, {"charts", std::move(cs)}});
  }
  o += "<script type=\"application/json\" id=\"gd-chart-data\">";
  o += json_in_script(
      data.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace));
  o += "</script>\n<script>";
  o += inline_safe(in.uplot_js, "script");
  o += "</script>\n<script>";
  o += kJs;
  o += "</script>\n</body></html>\n";
  return o;
}

}  // namespace gd
