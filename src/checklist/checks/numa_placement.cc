// numa-placement: where each GPU process may run and allocate (its
// Cpus_allowed_list / Mems_allowed_list) against the NUMA node its GPU
// hangs off. Host buffers on the remote node cross the socket interconnect
// on every copy, and the CPU threads feeding the GPU wait on remote memory.
// A process confined to other nodes than its GPU's warns; an unpinned one
// passes with a note (the scheduler may or may not keep it local).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

namespace {

std::optional<std::string> status_field(const std::string& status,
                                        const std::string& key) {
  auto pos = status.find("\n" + key + ":");
  if (pos == std::string::npos) return std::nullopt;
  pos += key.size() + 2;
  auto end = status.find('\n', pos);
  std::string v =
      status.substr(pos, end == std::string::npos ? end : end - pos);
  auto b = v.find_first_not_of(" \t");
  return b == std::string::npos ? std::string() : v.substr(b);
}

// numa_node of the GPU's PCI device in sysfs (-1 there means "no
// affinity"), else the header's.
std::optional<int> gpu_node(const CheckContext& ctx, const GpuInfo& info) {
  std::string name = sysfs_pci_name(info.pci_bus_id);
  if (!name.empty())
    if (auto line = read_line(ctx.sys_root + "/bus/pci/devices/" + name +
                              "/numa_node")) {
      int node = -1;
      if (std::sscanf(line->c_str(), "%d", &node) == 1)
        return node >= 0 ? std::optional<int>(node) : std::nullopt;
    }
  return info.numa_node;
}

}  // namespace

std::vector<CheckItem> check_numa_placement(const CheckContext& ctx) {
  constexpr const char* kId = "numa-placement";
  if (auto skip = skip_without_nvml(ctx.header, kId)) return {*skip};
  auto procs = gpu_processes(ctx.sample);
  if (procs.empty())
    return {make_item(kId, CheckStatus::kSkip, "-", "no GPU processes")};

  // node -> its CPUs, from /sys/devices/system/node/node<N>/cpulist.
  std::map<int, std::set<int>> node_cpus;
  std::error_code ec;
  namespace fs = std::filesystem;
  for (fs::directory_iterator it(ctx.sys_root + "/devices/system/node", ec),
       end;
       !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    int node = -1;
    char tail = 0;
    if (std::sscanf(name.c_str(), "node%d%c", &node, &tail) != 1) continue;
    auto list = read_line((it->path() / "cpulist").string());
    if (auto cpus = list ? parse_cpu_list(*list) : std::nullopt)
      node_cpus[node] = *cpus;
  }
  if (node_cpus.size() == 1)
    return {make_item(kId, CheckStatus::kPass, "one NUMA node",
                      "every placement is local")};
  if (node_cpus.empty())
    return {make_item(kId, CheckStatus::kSkip, "-",
                      "/sys/devices/system/node is not readable")};

  std::vector<ProcessResult> results;
  for (const auto& [pid, gpus] : procs) {
    auto status = read_text(fmt::format("{}/{}/status", ctx.proc_root, pid));
    auto cpus_text =
        status ? status_field(*status, "Cpus_allowed_list") : std::nullopt;
    auto mems_text =
        status ? status_field(*status, "Mems_allowed_list") : std::nullopt;
    auto cpus = cpus_text ? parse_cpu_list(*cpus_text) : std::nullopt;
    auto mems = mems_text ? parse_cpu_list(*mems_text) : std::nullopt;
    if (!cpus || !mems) {
      results.push_back({pid, CheckStatus::kSkip, "-",
                         "/proc/PID/status is not readable (process gone or "
                         "in another PID namespace)"});
      continue;
    }
    for (int index : gpus) {
      const GpuInfo* info = find_gpu_info(ctx.header, index);
      auto node = info ? gpu_node(ctx, *info) : std::nullopt;
      if (!node || !node_cpus.count(*node)) {
        results.push_back({pid, CheckStatus::kSkip,
                           fmt::format("GPU {}", index),
                           "the GPU reports no NUMA node"});
        continue;
      }
      std::string value = fmt::format("GPU {} on node {}; cpus {}, mems {}",
                                      index, *node, *cpus_text, *mems_text);
      const auto& local = node_cpus[*node];
      bool cpu_local = std::any_of(cpus->begin(), cpus->end(),
                                   [&](int c) { return local.count(c) > 0; });
      bool mem_local = mems->count(*node) > 0;
      bool pinned =
          mems->size() < node_cpus.size() ||
          std::any_of(node_cpus.begin(), node_cpus.end(), [&](const auto& n) {
            return std::none_of(n.second.begin(), n.second.end(),
                                [&](int c) { return cpus->count(c) > 0; });
          });
      std::string fix = fmt::format(
          "bind it to its GPU's node: `numactl --cpunodebind={0} "
          "--membind={0}` "
          "(or the container's cpuset)",
          *node);
      if (!cpu_local || !mem_local)
        results.push_back({pid, CheckStatus::kWarn, value,
                           fmt::format("confined to {} away from its GPU: {}",
                                       !mem_local ? "memory" : "CPUs", fix)});
      else if (!pinned)
        results.push_back(
            {pid, CheckStatus::kPass, value + " (not pinned)",
             "may run on the remote node; " + fix + " keeps it local"});
      else
        results.push_back({pid, CheckStatus::kPass, value, ""});
    }
  }
  return fold_process_results(kId, ctx.sample, results);
}

}  // namespace gd
