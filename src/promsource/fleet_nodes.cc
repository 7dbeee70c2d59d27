#include "promsource/fleet_nodes.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "promsource/node_match.h"

namespace gd::promsource {

std::vector<std::string> fleet_nodes(const http::prom::Client& client,
                                     double start, double end,
                                     http::RequestCancel& cancel,
                                     const std::string& match) {
  auto r = client.series("DCGM_FI_DEV_GPU_UTIL" + match, start, end, cancel);
  if (!r.ok) throw std::runtime_error("listing the nodes: " + r.error);
  std::set<std::string> nodes;
  for (const auto& s : r.series) {
    std::string node = node_of(s.label("Hostname"), s.label("instance"));
    try {
      check_node_name(node);
    } catch (const std::invalid_argument&) {
      continue;
    }
    nodes.insert(std::move(node));
  }
  return {nodes.begin(), nodes.end()};
}

std::map<std::string, std::vector<std::string>> node_aliases(
    const http::prom::Client& client, double start, double end,
    http::RequestCancel& cancel) {
  auto r = client.series("node_uname_info", start, end, cancel);
  if (!r.ok)
    throw std::runtime_error("listing node_exporter's hosts: " + r.error);
  std::map<std::string, std::vector<std::string>> aliases;
  for (const auto& s : r.series) {
    const std::string node = s.label("nodename");
    const std::string host = node_of("", s.label("instance"));
    try {
      check_node_name(node);
      check_node_name(host);
    } catch (const std::invalid_argument&) {
      continue;
    }
    auto& hosts = aliases[node];
    if (host == node || hosts.size() == kMaxAliasesPerNode ||
        std::find(hosts.begin(), hosts.end(), host) != hosts.end())
      continue;
    hosts.push_back(host);
  }
  return aliases;
}

}  // namespace gd::promsource
