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

std::string instance_matcher(const std::string& node) {
  check_node_name(node);
  // '.' is the one regular-expression character a checked name can hold;
  // "\\." in a PromQL string is the regex "\.".
  std::string regex;
  for (char c : node) {
    if (c == '.') regex += "\\\\";
    regex += c;
  }
  return "instance=~\"" + regex + "(:[0-9]+)?\"";
}

std::string gpu_query(const std::string& metric, const std::string& node) {
  const std::string instance = instance_matcher(node);
  // A label that is absent matches "": serve's series have no Hostname.
  return metric + "{Hostname=\"" + node + "\"} or " + metric +
         "{Hostname=\"\"," + instance + "}";
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
