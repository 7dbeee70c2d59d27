#include "cli/fleet_report.h"

#include <mutex>
#include <stdexcept>

#include "accounting/fleet_merge.h"
#include "cli/fleet_plan.h"
#include "cli/node_window_source.h"
#include "diagnose/engine.h"
#include "promsource/read_node.h"

namespace gd {
namespace {

accounting::AccountReport account_node(const http::prom::Client& client,
                                       const promsource::NodeQuery& q,
                                       promsource::ReadChoice& read,
                                       const accounting::AccountOptions& o,
                                       bool findings,
                                       http::RequestCancel& cancel) {
  const auto window = promsource::read_node(client, q, read, cancel);
  const TraceHeader header = window.header();
  accounting::Accountant acc(header, o);
  if (!findings) {
    window.each_sample([&acc](const Sample& s) { acc.add(s); });
  } else {
    NodeWindowSource source(window, [&acc](const Sample& s) { acc.add(s); });
    const DiagnoseResult d = diagnose(header, source, {});
    std::vector<accounting::Accountant::FindingSpan> spans;
    for (const Finding& x : d.findings)
      spans.push_back({x.id, x.severity, x.pids, x.start, x.end});
    acc.attribute(spans);
  }
  auto r = acc.finish();
  if (r.samples == 0) throw std::runtime_error("no samples in the window");
  return r;
}

}  // namespace

FleetReport report_fleet(const FleetReportFlags& f,
                         const accounting::AccountOptions& options) {
  const FleetPlan plan = plan_fleet(f);
  accounting::AccountOptions o = options;
  o.start = plan.window.start;
  o.end = plan.window.end;
  std::vector<accounting::NodeAccount> accounts(plan.nodes.size());
  std::vector<std::string> errors(plan.nodes.size());
  promsource::ReadChoice read(read_path_of(f.prom));
  for_each_node(
      plan, f, read, "report",
      [&](size_t i, const http::prom::Client& client, NodeTurn& turn) {
        accounts[i].node = plan.nodes[i];
        try {
          accounts[i].report = account_node(client, node_query(plan, i, f.prom),
                                            read, o, f.findings, turn.cancel());
        } catch (const std::exception& e) {
          const std::string ran_out = turn.ran_out();
          errors[i] = ran_out.empty() ? e.what() : ran_out;
        }
      },
      [&](size_t i, const std::string& why) { errors[i] = why; });
  FleetReport out;
  out.nodes = plan.nodes.size();
  std::vector<accounting::NodeAccount> checked;
  for (size_t i = 0; i < accounts.size(); ++i) {
    if (errors[i].empty())
      checked.push_back(std::move(accounts[i]));
    else
      out.not_checked.push_back(plan.nodes[i] + ": " + errors[i]);
  }
  out.report = accounting::merge_node_reports(std::move(checked));
  return out;
}

}  // namespace gd
