#include "monitor/fleet_rows.h"

#include <algorithm>
#include <cctype>

namespace gd::monitor {
namespace {

int severity_points(const std::string& severity) {
  if (severity == "critical") return 50;
  if (severity == "warning") return 30;
  if (severity == "info") return 10;
  return 0;
}

int status_points(NodeStatus s) {
  switch (s) {
    case NodeStatus::kRefused:
      return 40;
    case NodeStatus::kGone:
      return 35;
    case NodeStatus::kStale:
      return 20;
    case NodeStatus::kOk:
      break;
  }
  return 0;
}

std::string lower_text(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool row_matches(const FleetNodeState& n, const std::string& needle) {
  if (needle.empty()) return true;
  if (lower_text(n.data.node).find(needle) != std::string::npos) return true;
  for (const auto& c : n.judged.findings)
    if (c.finding.id.find(needle) != std::string::npos) return true;
  return false;
}

}  // namespace

double fleet_stale_after_s(const FleetFrame& f) {
  return std::max(kFleetStaleS, 3 * f.interval_s);
}

const char* node_status_name(NodeStatus s) {
  switch (s) {
    case NodeStatus::kOk:
      return "ok";
    case NodeStatus::kStale:
      return "stale";
    case NodeStatus::kGone:
      return "gone";
    case NodeStatus::kRefused:
      return "refused";
  }
  return "ok";
}

std::vector<FleetRow> fleet_rows(const FleetFrame& f, const std::string& filter,
                                 double now) {
  std::vector<FleetRow> rows;
  const std::string needle = lower_text(filter);
  for (const auto& n : f.nodes) {
    if (!row_matches(n, needle)) continue;
    FleetRow& r = rows.emplace_back();
    r.node = &n;
    r.age_s = n.data.last_seen > 0 ? std::max(0.0, now - n.data.last_seen) : 0;
    if (!n.data.error.empty())
      r.status = NodeStatus::kRefused;
    else if (!n.listed)
      r.status = NodeStatus::kGone;
    else if (r.age_s > fleet_stale_after_s(f))
      r.status = NodeStatus::kStale;
    r.findings = n.judged.findings.size();
    if (!n.judged.findings.empty()) {
      // check sorts them most severe first.
      r.worst_id = n.judged.findings.front().finding.id;
      r.worst_severity = n.judged.findings.front().finding.severity;
    }
    r.rank =
        std::max(severity_points(r.worst_severity), status_points(r.status));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.rank != b.rank) return a.rank > b.rank;
    if (a.findings != b.findings) return a.findings > b.findings;
    return a.node->data.node < b.node->data.node;
  });
  return rows;
}

}  // namespace gd::monitor
