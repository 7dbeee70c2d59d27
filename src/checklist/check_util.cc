#include "checklist/check_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/int_list.h"

namespace gd::checklist {

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return out.str();
}

std::optional<std::string> read_line(const std::string& path) {
  auto text = read_text(path);
  if (!text) return std::nullopt;
  std::string line = text->substr(0, text->find('\n'));
  auto b = line.find_first_not_of(" \t\r");
  auto e = line.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : line.substr(b, e - b + 1);
}

std::optional<CheckItem> skip_without_nvml(const TraceHeader& header,
                                           const char* id) {
  const std::string& s = header.nvml_status;
  if (s == kNvmlOk && header.driver) return std::nullopt;
  std::string why;
  if (s == kNvmlNoDriver)
    why = "no NVIDIA driver";
  else if (s == kNvmlDriverMismatch)
    why =
        "NVML cannot be used: driver/library version mismatch (see "
        "kernel-module)";
  else if (s == kNvmlNoPermission)
    why = "NVML cannot be used: insufficient permissions";
  else
    why = "NVML cannot be used" +
          (header.nvml_error.empty() ? "" : ": " + header.nvml_error);
  return make_item(id, CheckStatus::kSkip, "-", why);
}

std::map<uint32_t, std::set<int>> gpu_processes(const Sample& sample) {
  std::map<uint32_t, std::set<int>> out;
  for (const auto& g : sample.gpus)
    if (g.processes)
      for (const auto& p : *g.processes) out[p.pid].insert(g.index);
  return out;
}

const ProcessSample* find_process(const Sample& sample, uint32_t pid) {
  for (const auto& p : sample.processes)
    if (p.pid == pid) return p.state == "missing" ? nullptr : &p;
  return nullptr;
}

std::string process_label(const Sample& sample, uint32_t pid) {
  const ProcessSample* p = find_process(sample, pid);
  if (!p || p->name.empty()) return fmt::format("pid {}", pid);
  return fmt::format("{} (pid {})", p->name, pid);
}

const GpuSample* find_gpu_sample(const Sample& sample, int index) {
  for (const auto& g : sample.gpus)
    if (g.index == index) return &g;
  return nullptr;
}

const GpuSample* answering_gpu_sample(const Sample& sample, int index,
                                      std::vector<GpuResult>& results) {
  const GpuSample* g = find_gpu_sample(sample, index);
  if (g && !g->lost && !g->stale) return g;
  results.push_back({index, CheckStatus::kSkip, "-",
                     g && g->lost ? "GPU is lost" : "GPU did not answer"});
  return nullptr;
}

std::string sysfs_pci_name(const std::string& nvml_bus_id) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  char tail = 0;
  if (std::sscanf(nvml_bus_id.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &device,
                  &function, &tail) != 4)
    return {};
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain & 0xffff, bus, device,
                     function);
}

namespace {
bool parse_int(std::string_view s, int& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= 0;
}
}  // namespace

std::optional<std::set<int>> parse_cpu_list(const std::string& text) {
  // Bound the expansion: a corrupt "0-2000000000" must not allocate forever.
  constexpr int kMaxCpu = 1 << 20;
  std::set<int> out;
  std::string_view rest = text;
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == ' '))
    rest.remove_suffix(1);
  if (rest.empty()) return out;
  while (true) {
    auto comma = rest.find(',');
    std::string_view part = rest.substr(0, comma);
    auto dash = part.find('-');
    int lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      if (!parse_int(part, lo)) return std::nullopt;
      hi = lo;
    } else if (!parse_int(part.substr(0, dash), lo) ||
               !parse_int(part.substr(dash + 1), hi) || hi < lo) {
      return std::nullopt;
    }
    if (hi > kMaxCpu) return std::nullopt;
    for (int c = lo; c <= hi; ++c) out.insert(c);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

std::vector<CheckItem> fold_gpu_results(const char* id,
                                        const std::vector<GpuResult>& results) {
  if (results.empty())
    return {make_item(id, CheckStatus::kSkip, "-", "no GPUs")};
  struct Group {
    const GpuResult* first;
    std::vector<int> gpus;
  };
  std::vector<Group> groups;
  for (const auto& r : results) {
    bool found = false;
    for (auto& g : groups)
      if (g.first->status == r.status && g.first->value == r.value &&
          g.first->detail == r.detail) {
        g.gpus.push_back(r.gpu);
        found = true;
        break;
      }
    if (!found) groups.push_back({&r, {r.gpu}});
  }
  std::vector<CheckItem> out;
  for (const auto& g : groups)
    out.push_back(make_item(
        id, g.first->status,
        fmt::format("GPU {}: {}", join_ints(g.gpus, ","), g.first->value),
        g.first->detail));
  return out;
}

std::vector<CheckItem> fold_process_results(
    const char* id, const Sample& sample,
    const std::vector<ProcessResult>& results) {
  std::vector<std::pair<const ProcessResult*, std::vector<uint32_t>>> groups;
  for (const auto& r : results) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return g.first->status == r.status && g.first->value == r.value &&
             g.first->detail == r.detail;
    });
    if (it == groups.end())
      groups.push_back({&r, {r.pid}});
    else
      it->second.push_back(r.pid);
  }
  std::vector<CheckItem> out;
  for (const auto& [first, pids] : groups) {
    std::string who = pids.size() == 1
                          ? process_label(sample, pids[0])
                          : fmt::format("pid {}", fmt::join(pids, ", "));
    out.push_back(make_item(id, first->status,
                            fmt::format("{}: {}", who, first->value),
                            first->detail));
  }
  return out;
}

std::optional<ProcessLimit> read_process_limit(const std::string& proc_root,
                                               uint32_t pid,
                                               const std::string& name) {
  auto text = read_text(fmt::format("{}/{}/limits", proc_root, pid));
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    // The name column is padded with blanks; values follow it.
    if (line.rfind(name, 0) != 0 || line.size() <= name.size() ||
        line[name.size()] != ' ')
      continue;
    std::istringstream fields(line.substr(name.size()));
    std::string soft, hard;
    if (!(fields >> soft >> hard)) return std::nullopt;
    auto number = [](const std::string& t, std::optional<uint64_t>& out) {
      if (t == "unlimited") return true;
      uint64_t v = 0;
      auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (ec != std::errc() || p != t.data() + t.size()) return false;
      out = v;
      return true;
    };
    ProcessLimit lim;
    if (!number(soft, lim.soft) || !number(hard, lim.hard)) return std::nullopt;
    return lim;
  }
  return std::nullopt;
}

CheckItem make_item(const char* id, CheckStatus status, std::string value,
                    std::string detail) {
  return CheckItem{id, status, std::move(value), std::move(detail)};
}

}  // namespace gd::checklist
