#include "cli/fleet_diagnose.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "cli/fleet_plan.h"
#include "cli/node_window_source.h"
#include "http_client/prometheus_api.h"
#include "promsource/read_node.h"
#include "serve/web_assets.h"
#include "views/diagnose_report.h"
#include "views/fleet_html.h"
#include "views/fleet_report.h"

namespace gd {
namespace {

struct NodeDone {
  FleetNodeOutcome outcome;
  std::string report;      // text or JSON, as asked
  FleetNodeCharts charts;  // with --html: bounded (kFleetChartPoints)
};

// One node read and diagnosed; its window is freed on return.
NodeDone check_node(const http::prom::Client& client,
                    const promsource::NodeQuery& q,
                    promsource::ReadChoice& read,
                    const DiagnoseOptions& options, bool json, bool charts,
                    NodeTurn& turn) {
  NodeDone d;
  d.outcome.node = q.node;
  try {
    auto window = promsource::read_node(client, q, read, turn.cancel());
    const TraceHeader header = window.header();
    NodeWindowSource source(window);
    DiagnoseResult result = diagnose(header, source, options);
    if (result.window.samples == 0)
      throw std::runtime_error("no samples in the window");
    d.outcome.checked = true;
    d.outcome.exit_code = diagnose_exit_code(result);
    d.report =
        json ? format_json_report(result) : format_text_report(result, header);
    if (charts) {
      FleetChartBuilder b(q.start, q.end, fleet_chart_keys(result.findings));
      window.each_sample([&b](const Sample& s) { b.add(s); });
      d.charts = b.take();
    }
    d.outcome.findings = std::move(result.findings);
    d.outcome.not_judged = std::move(result.not_judged);
  } catch (const std::exception& e) {
    const std::string ran_out = turn.ran_out();
    d.outcome.why_not = ran_out.empty() ? e.what() : ran_out;
  }
  return d;
}

// The embedded dashboard asset whose name ends in `name` ("" if none).
std::string_view web_asset_body(std::string_view name) {
  for (const WebAsset& a : web_assets())
    if (a.path.ends_with(name)) return a.body;
  return {};
}

// --html: the page, written once every node is done and reported (it takes
// their outcomes and charts). A failure is one line naming the file.
bool write_fleet_html(const FleetDiagnoseFlags& f, const TimeWindow& w,
                      const std::vector<FleetNodeOutcome>& outcomes,
                      std::vector<NodeDone>& done) {
  std::vector<FleetNodeCharts> charts;
  for (auto& d : done) charts.push_back(std::move(d.charts));
  FleetHtmlInput in;
  in.server = f.prom.url;
  in.start = w.start;
  in.end = w.end;
  in.nodes = &outcomes;
  in.charts = &charts;
  in.uplot_js = web_asset_body("/uPlot.min.js");
  in.uplot_css = web_asset_body("/uPlot.min.css");
  const std::string page = format_fleet_html(in);
  std::ofstream out(f.html, std::ios::binary | std::ios::trunc);
  if (out) out.write(page.data(), static_cast<std::streamsize>(page.size()));
  if (out) out.close();
  if (!out) {
    std::fprintf(stderr, "gpudoctor: diagnose: cannot write %s: %s\n",
                 f.html.c_str(), std::strerror(errno));
    return false;
  }
  return true;
}

// "checked 12/100 nodes" on one rewritten line of a terminal's stderr.
class Progress {
 public:
  explicit Progress(size_t total) : total_(total), on_(isatty(2) == 1) {}
  void step() {
    if (!on_) return;
    std::lock_guard lock(mu_);
    ++done_;
    std::fprintf(stderr, "\rgpudoctor: diagnose: checked %zu/%zu nodes", done_,
                 total_);
    if (done_ == total_) std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
  // Before a report is written: the line is rewritten at the next step.
  void clear() {
    if (!on_) return;
    std::lock_guard lock(mu_);
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }

 private:
  std::mutex mu_;
  size_t total_, done_ = 0;
  bool on_;
};

}  // namespace

int diagnose_fleet(const FleetDiagnoseFlags& f,
                   const DiagnoseOptions& options) {
  const FleetPlan plan = plan_fleet(f);
  const TimeWindow& w = plan.window;
  const auto& nodes = plan.nodes;
  // Each node's report is written as soon as it and every node before it
  // are done: the output is in node order, whatever finishes first, and a
  // report is held only while an earlier node is still being read.
  std::vector<NodeDone> done(nodes.size());
  std::vector<bool> ready(nodes.size(), false);
  size_t written = 0;
  std::mutex out_mu;
  int worst = -1;
  auto write = [&](const std::string& text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
  };
  if (f.json) write("{\"nodes\":[");
  Progress progress(nodes.size());
  auto deliver = [&](size_t i, NodeDone d) {
    std::lock_guard lock(out_mu);
    done[i] = std::move(d);
    ready[i] = true;
    for (; written < done.size() && ready[written]; ++written) {
      progress.clear();
      NodeDone& node = done[written];
      if (node.outcome.checked) worst = std::max(worst, node.outcome.exit_code);
      write(f.json ? (written ? "," : "") +
                         format_fleet_node_json(node.outcome, node.report)
                   : format_fleet_node_text(node.outcome, node.report) + "\n");
      std::fflush(stdout);
      std::string().swap(node.report);
    }
  };
  promsource::ReadChoice read(read_path_of(f.prom));
  // The rules record the config keys they ask for (Config::get): each node
  // asks its own copy.
  for_each_node(
      plan, f, read, "diagnose",
      [&](size_t i, const http::prom::Client& client, NodeTurn& turn) {
        const DiagnoseOptions own = options;
        deliver(i, check_node(client, node_query(plan, i, f.prom), read, own,
                              f.json, !f.html.empty(), turn));
        progress.step();
      },
      [&](size_t i, const std::string& why) {
        NodeDone d;
        d.outcome.node = nodes[i];
        d.outcome.why_not = why;
        deliver(i, std::move(d));
        progress.step();
      });

  std::vector<FleetNodeOutcome> outcomes;
  outcomes.reserve(done.size());
  for (auto& d : done) outcomes.push_back(std::move(d.outcome));
  write(f.json ? "],\"summary\":" + format_fleet_summary_json(outcomes) + "}\n"
               : format_fleet_summary_text(outcomes));
  std::fflush(stdout);
  if (!f.html.empty() && !write_fleet_html(f, w, outcomes, done))
    return kExitCouldNotDiagnose;
  return worst < 0 ? kExitCouldNotDiagnose : worst;
}

}  // namespace gd
