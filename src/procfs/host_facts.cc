#include "procfs/host_facts.h"

#include "common/ascii_text.h"
#include "procfs/text_util.h"

namespace gd::procfs {

// cpuinfo keys are padded with tabs before the colon: "model name\t: ...".
static std::optional<std::string_view> cpuinfo_value(std::string_view line,
                                                     std::string_view key) {
  if (!line.starts_with(key)) return std::nullopt;
  std::string_view rest = line.substr(key.size());
  size_t colon = rest.find(':');
  if (colon == std::string_view::npos || !trim(rest.substr(0, colon)).empty())
    return std::nullopt;
  return trim(rest.substr(colon + 1));
}

CpuInfo parse_cpuinfo(std::string_view text) {
  CpuInfo info;
  std::string fallback_model;
  int processors = 0;
  std::string_view line;
  while (next_line(text, line)) {
    if (cpuinfo_value(line, "processor")) {
      ++processors;
    } else if (auto v = cpuinfo_value(line, "model name")) {
      if (info.model.empty()) info.model = std::string(*v);
    } else if (auto h = cpuinfo_value(line, "Hardware")) {
      if (fallback_model.empty()) fallback_model = std::string(*h);
    } else if (auto m = cpuinfo_value(line, "Model")) {
      if (fallback_model.empty()) fallback_model = std::string(*m);
    }
  }
  if (info.model.empty()) info.model = fallback_model;
  if (processors > 0) info.processors = processors;
  return info;
}

std::optional<unsigned long long> parse_ns_link(std::string_view link) {
  size_t open = link.find(":[");
  if (open == std::string_view::npos || link.empty() || link.back() != ']')
    return std::nullopt;
  auto v = parse_u64(link.substr(open + 2, link.size() - open - 3));
  if (!v) return std::nullopt;
  return *v;
}

std::optional<int> parse_nspid_depth(std::string_view status_text) {
  std::string_view line;
  while (next_line(status_text, line)) {
    auto v = value_after_key(line, "NSpid");
    if (!v) continue;
    int n = 0;
    for (std::string_view f = next_field(*v); !f.empty(); f = next_field(*v))
      ++n;
    return n > 0 ? std::optional<int>(n) : std::nullopt;
  }
  return std::nullopt;
}

std::string decide_pid_namespace(
    std::optional<unsigned long long> self_ns_inode,
    std::optional<int> nspid_depth) {
  if (nspid_depth && *nspid_depth > 1) return "container";
  if (self_ns_inode)
    return *self_ns_inode == kInitialPidNsInode ? "host" : "container";
  return "";
}

}  // namespace gd::procfs
