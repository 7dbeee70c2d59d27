#include "promsource/node_match.h"

#include <stdexcept>

namespace gd::promsource {

void check_node_name(const std::string& node) {
  if (node.empty() || node.size() > kMaxNodeChars)
    throw std::invalid_argument("node name must be 1 to " +
                                std::to_string(kMaxNodeChars) + " characters");
  for (char c : node) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    if (!ok)
      throw std::invalid_argument(
          "'" + node +
          "' is not a node name (letters, digits, '.', '-', '_'; the "
          "Hostname of dcgm-exporter or the host of an instance)");
  }
}

void check_label_name(const std::string& label) {
  bool ok = !label.empty() && label.size() <= 128 &&
            !(label[0] >= '0' && label[0] <= '9');
  for (char c : label)
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                (c >= '0' && c <= '9') || c == '_');
  if (!ok)
    throw std::invalid_argument("'" + label +
                                "' is not a label name ([a-zA-Z_][a-zA-Z0-9_]*"
                                ", at most 128 characters)");
}

namespace {

// '.' is the one regular-expression character a checked name can hold.
std::string host_regex(const std::string& host) {
  check_node_name(host);
  std::string regex;
  for (char c : host) {
    if (c == '.') regex += '\\';
    regex += c;
  }
  return regex;
}

// A regular expression as a PromQL string's body: "\\." is the regex "\.".
std::string promql_string(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string instance_regex(const NodeSelector& node) {
  std::string hosts = host_regex(node.node);
  for (const auto& h : node.instance_hosts) hosts += "|" + host_regex(h);
  if (!node.instance_hosts.empty()) hosts = "(" + hosts + ")";
  return hosts + "(:[0-9]+)?";
}

std::string instance_matcher(const NodeSelector& node) {
  return "instance=~\"" + promql_string(instance_regex(node)) + "\"";
}

std::string host_matcher(const NodeSelector& node) {
  if (node.node_label.empty()) return instance_matcher(node);
  check_label_name(node.node_label);
  check_node_name(node.node);
  return node.node_label + "=\"" + node.node + "\"";
}

std::string gpu_query(const std::string& metric, const NodeSelector& node) {
  const std::string instance = instance_matcher(node);
  // A label that is absent matches "": older serves wrote no Hostname.
  return metric + "{Hostname=\"" + node.node + "\"} or " + metric +
         "{Hostname=\"\"," + instance + "}";
}

std::vector<http::prom::Selector> gpu_selectors(
    const std::vector<std::string>& metrics, const NodeSelector& node) {
  using http::prom::Matcher;
  check_node_name(node.node);
  std::string names;
  for (const auto& m : metrics) names += (names.empty() ? "" : "|") + m;
  const Matcher name{Matcher::Op::kRe, "__name__", names};
  return {{name, {Matcher::Op::kEq, "Hostname", node.node}},
          {name,
           {Matcher::Op::kEq, "Hostname", ""},
           {Matcher::Op::kRe, "instance", instance_regex(node)}}};
}

bool is_node_of(const NodeSelector& node, const std::string& hostname,
                const std::string& instance) {
  const std::string named = node_of(hostname, instance);
  if (named == node.node) return true;
  if (!hostname.empty()) return false;
  for (const auto& h : node.instance_hosts)
    if (named == h) return true;
  return false;
}

std::string node_of(const std::string& hostname, const std::string& instance) {
  if (!hostname.empty()) return hostname;
  // "host:port"; "[v6]:port" is left whole.
  const size_t colon = instance.rfind(':');
  if (colon == std::string::npos || instance.find(']') != std::string::npos)
    return instance;
  return instance.substr(0, colon);
}

}  // namespace gd::promsource
