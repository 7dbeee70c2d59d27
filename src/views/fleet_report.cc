#include "views/fleet_report.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "common/terminal_text.h"

namespace gd {
namespace {

struct Tally {
  size_t checked = 0;
  std::vector<const FleetNodeOutcome*> failed;
  std::map<std::string, size_t> finding_nodes;  // id -> nodes
  std::map<std::pair<std::string, std::string>, size_t> not_judged;
  std::vector<const FleetNodeOutcome*> worst;
};

Tally tally(const std::vector<FleetNodeOutcome>& nodes) {
  Tally t;
  for (const auto& n : nodes) {
    if (!n.checked) {
      t.failed.push_back(&n);
      continue;
    }
    ++t.checked;
    std::set<std::string> ids;
    for (const auto& f : n.findings) ids.insert(f.id);
    for (const auto& id : ids) ++t.finding_nodes[id];
    for (const auto& nj : n.not_judged) ++t.not_judged[{nj.id, nj.reason}];
    if (n.exit_code > 0) t.worst.push_back(&n);
  }
  std::stable_sort(t.worst.begin(), t.worst.end(), [](auto* a, auto* b) {
    if (a->exit_code != b->exit_code) return a->exit_code > b->exit_code;
    return a->findings.size() > b->findings.size();
  });
  if (t.worst.size() > kFleetWorstShown) t.worst.resize(kFleetWorstShown);
  return t;
}

const char* level(int exit_code) {
  return exit_code >= 2 ? "critical" : exit_code == 1 ? "warning" : "ok";
}

}  // namespace

std::string format_fleet_node_text(const FleetNodeOutcome& node,
                                   const std::string& report_text) {
  std::string out = "== " + terminal_safe(node.node) + " ==\n";
  if (!node.checked)
    return out + "could not check: " + terminal_safe(node.why_not) + "\n";
  out += report_text;
  if (out.back() != '\n') out += '\n';
  return out;
}

std::string format_fleet_summary_text(
    const std::vector<FleetNodeOutcome>& nodes) {
  const Tally t = tally(nodes);
  std::string out = "== fleet ==\n";
  out += "nodes checked: " + std::to_string(t.checked) + " of " +
         std::to_string(nodes.size()) + "\n";
  if (!t.failed.empty()) {
    out += "could not check " + std::to_string(t.failed.size()) + ":\n";
    for (const auto* n : t.failed)
      out += "  " + terminal_safe(n->node) + ": " + terminal_safe(n->why_not) +
             "\n";
  }
  if (t.finding_nodes.empty()) {
    out += "findings: none\n";
  } else {
    out += "findings (nodes):\n";
    for (const auto& [id, count] : t.finding_nodes)
      out += "  " + terminal_safe(id) + "  " + std::to_string(count) + "\n";
  }
  if (!t.worst.empty()) {
    out += "worst nodes:\n";
    for (const auto* n : t.worst)
      out += "  " + terminal_safe(n->node) + "  " + level(n->exit_code) + ", " +
             std::to_string(n->findings.size()) + " finding(s)\n";
  }
  if (!t.not_judged.empty()) {
    out += "not judged (nodes):\n";
    for (const auto& [key, count] : t.not_judged)
      out += "  " + terminal_safe(key.first) + "  " + std::to_string(count) +
             ": " + terminal_safe(key.second, kTerminalSentenceMax) + "\n";
  }
  return out;
}

std::string format_fleet_node_json(const FleetNodeOutcome& node,
                                   const std::string& report_json) {
  const std::string name = nlohmann::json(node.node).dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (!node.checked)
    return "{\"node\":" + name + ",\"error\":" +
           nlohmann::json(node.why_not)
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
           "}";
  return "{\"node\":" + name + ",\"report\":" + report_json + "}";
}

std::string format_fleet_summary_json(
    const std::vector<FleetNodeOutcome>& nodes) {
  const Tally t = tally(nodes);
  nlohmann::json j;
  j["checked"] = t.checked;
  j["not_checked"] = nlohmann::json::array();
  for (const auto* n : t.failed)
    j["not_checked"].push_back({{"node", n->node}, {"error", n->why_not}});
  j["findings"] = nlohmann::json::array();
  for (const auto& [id, count] : t.finding_nodes)
    j["findings"].push_back({{"id", id}, {"nodes", count}});
  j["worst"] = nlohmann::json::array();
  for (const auto* n : t.worst)
    j["worst"].push_back({{"node", n->node},
                          {"exit_code", n->exit_code},
                          {"findings", n->findings.size()}});
  j["not_judged"] = nlohmann::json::array();
  for (const auto& [key, count] : t.not_judged)
    j["not_judged"].push_back(
        {{"id", key.first}, {"reason", key.second}, {"nodes", count}});
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gd
