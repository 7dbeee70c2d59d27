#include "promsource/fleet_nodes.h"

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

}  // namespace gd::promsource
