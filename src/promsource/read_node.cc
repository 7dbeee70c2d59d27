#include "promsource/read_node.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "promsource/node_match.h"

namespace gd::promsource {
namespace {

void replace_all(std::string& text, const std::string& from,
                 const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

}  // namespace

std::string rate_window(double step_s) {
  const double s = std::ceil(std::max(60.0, 4 * step_s));
  return "[" + std::to_string(static_cast<long long>(s)) + "s]";
}

std::string query_of(const Entry& e, const NodeSelector& node, double step_s) {
  if (e.scope == Scope::kGpu) return gpu_query(e.query, node);
  std::string q = e.query;
  for (size_t at = q.find("$S("); at != std::string::npos;
       at = q.find("$S(", at)) {
    const size_t close = q.find(')', at);
    if (close == std::string::npos)
      throw std::logic_error("unclosed $S( in " + std::string(e.query));
    const std::string metric = q.substr(at + 3, close - at - 3);
    const std::string series = "(" + gpu_query(metric, node) + ")";
    q.replace(at, close + 1 - at, series);
    at += series.size();
  }
  replace_all(q, "$I", host_matcher(node));
  replace_all(q, "$W", rate_window(step_s));
  return q;
}

NodeWindow read_node(const http::prom::Client& client, const NodeQuery& q,
                     http::RequestCancel& cancel) {
  const NodeSelector node{q.node, q.instance_hosts, q.node_label};
  check_node_name(q.node);
  if (!q.node_label.empty()) check_label_name(q.node_label);
  NodeWindow window(node, q.start, q.end, q.step_s);
  for (const Entry& e : entries()) {
    auto r = client.query_range(query_of(e, node, q.step_s), q.start, q.end,
                                q.step_s, cancel);
    if (!r.ok)
      throw std::runtime_error("asking for " + std::string(e.field) + " (" +
                               e.query + "): " + r.error);
    window.add(e, r.series);
  }
  return window;
}

}  // namespace gd::promsource
