#include "accounting/fleet_merge.h"

#include <algorithm>
#include <map>
#include <set>

namespace gd::accounting {
namespace {

// Whether a group of dimension `d` with key `key` is the same group on
// every node (merged by key) or its node's own (the node joins its key).
bool fleet_wide(Dimension d, const std::string& key) {
  // A pod's namespace/name is the cluster's: a fleet of one cluster's
  // nodes has each pod once.
  if (d == Dimension::kUser || d == Dimension::kContainer ||
      d == Dimension::kPod || d == Dimension::kNamespace)
    return true;
  return d == Dimension::kJob && key.rfind("slurm:", 0) == 0;
}

struct Merged {
  GroupRow row;
  std::set<std::string> nodes;
};

void merge_findings(std::vector<GroupFinding>& into,
                    const std::vector<GroupFinding>& from) {
  for (const GroupFinding& f : from) {
    auto same = std::find_if(into.begin(), into.end(), [&](const auto& x) {
      return x.id == f.id && x.severity == f.severity;
    });
    if (same == into.end()) {
      into.push_back(f);
    } else {
      same->seconds += f.seconds;
      same->share = std::max(same->share, f.share);
    }
  }
}

}  // namespace

AccountReport merge_node_reports(std::vector<NodeAccount> nodes) {
  AccountReport out;
  bool first = true;
  for (size_t di = 0; di < kDimensionCount; ++di) {
    const Dimension d = kDimensions[di];
    std::map<std::string, Merged> rows;
    std::vector<std::string> order;  // first seen first
    Merged other;
    bool any_other = false;
    for (const NodeAccount& n : nodes)
      for (const GroupRow& row : n.report.by(d)) {
        if (row.folded) {
          any_other = true;
          other.row.usage.add(row.usage);
          other.nodes.insert(n.node);
          continue;
        }
        std::string key =
            fleet_wide(d, row.key) ? row.key : n.node + "/" + row.key;
        auto [it, fresh] = rows.try_emplace(key);
        Merged& m = it->second;
        if (fresh) {
          order.push_back(key);
          m.row = row;
          m.row.key = key;
          if (!fleet_wide(d, row.key)) m.row.label = n.node + ": " + row.label;
          m.row.findings.clear();
        } else {
          m.row.usage.add(row.usage);
          m.row.first_t = std::min(m.row.first_t, row.first_t);
          m.row.last_t = std::max(m.row.last_t, row.last_t);
        }
        m.row.gpu_mask = 0;  // GPU indices of several nodes name nothing
        merge_findings(m.row.findings, row.findings);
        m.nodes.insert(n.node);
      }
    auto& group = out.groups[di];
    for (const std::string& key : order) {
      Merged& m = rows[key];
      m.row.node_count = m.nodes.size();
      for (const std::string& node : m.nodes) {
        if (m.row.nodes.size() == kNodesPerGroup) break;
        m.row.nodes.push_back(node);
      }
      std::sort(
          m.row.findings.begin(), m.row.findings.end(),
          [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
      if (m.row.findings.size() > kFindingsPerGroup)
        m.row.findings.resize(kFindingsPerGroup);
      group.push_back(std::move(m.row));
    }
    std::stable_sort(group.begin(), group.end(),
                     [](const auto& a, const auto& b) {
                       return a.usage.held_s > b.usage.held_s;
                     });
    if (any_other) {
      other.row.key = "other";
      other.row.label = "other";
      other.row.folded = true;
      other.row.node_count = other.nodes.size();
      for (const std::string& node : other.nodes) {
        if (other.row.nodes.size() == kNodesPerGroup) break;
        other.row.nodes.push_back(node);
      }
      group.push_back(std::move(other.row));
    }
    for (const NodeAccount& n : nodes)
      out.groups_folded[di] = std::min(
          kFoldedCountMax, out.groups_folded[di] + n.report.groups_folded[di]);
  }
  for (NodeAccount& n : nodes) {
    const AccountReport& r = n.report;
    if (r.samples > 0) {
      out.start = first ? r.start : std::min(out.start, r.start);
      out.end = first ? r.end : std::max(out.end, r.end);
      first = false;
    }
    out.samples += r.samples;
    out.total.add(r.total);
    out.gap_s = std::max(out.gap_s, r.gap_s);
    for (GpuAccount g : r.gpus) {
      g.node = n.node;
      out.gpus.push_back(std::move(g));
    }
  }
  return out;
}

}  // namespace gd::accounting
