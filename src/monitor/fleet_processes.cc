#include "monitor/fleet_processes.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <utility>

#include "promsource/node_match.h"

namespace gd::monitor {
namespace {

// At most kMaxFleetProcessText bytes, not cutting a UTF-8 character.
std::string cut_process_text(std::string_view s) {
  if (s.size() <= kMaxFleetProcessText) return std::string(s);
  size_t n = kMaxFleetProcessText;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return std::string(s.substr(0, n));
}

// By GPU, the largest holders first; then bounded.
void order_and_bound(FleetProcesses& out) {
  std::stable_sort(out.rows.begin(), out.rows.end(),
                   [](const FleetProcess& a, const FleetProcess& b) {
                     if (a.gpu != b.gpu) return a.gpu < b.gpu;
                     return a.gpu_mem_bytes.value_or(0) >
                            b.gpu_mem_bytes.value_or(0);
                   });
  if (out.rows.size() > kMaxFleetProcesses) {
    out.left_out += out.rows.size() - kMaxFleetProcesses;
    out.rows.resize(kMaxFleetProcesses);
  }
}

}  // namespace

FleetProcesses fleet_processes_of(const std::string& node, const Sample& s) {
  FleetProcesses out;
  out.node = node;
  out.asked = true;
  std::unordered_map<uint32_t, const ProcessSample*> by_pid;
  for (const auto& p : s.processes) by_pid.emplace(p.pid, &p);
  bool listed = false;  // some GPU's process list was read
  for (const auto& g : s.gpus) {
    if (!g.processes) continue;
    listed = true;
    for (const auto& gp : *g.processes) {
      if (out.rows.size() >= 4 * kMaxFleetProcesses) {
        ++out.left_out;
        continue;
      }
      FleetProcess& r = out.rows.emplace_back();
      r.pid = std::to_string(gp.pid);
      r.gpu = g.index;
      r.gpu_mem_bytes = gp.used_bytes;
      if (auto it = by_pid.find(gp.pid); it != by_pid.end()) {
        r.user = cut_process_text(it->second->user);
        r.name = cut_process_text(it->second->name);
        r.cpu_pct = it->second->cpu_pct;
      }
    }
  }
  if (!listed) out.note = "processes: not read on this node (no GPU list)";
  order_and_bound(out);
  return out;
}

std::string fleet_process_query(const std::string& node) {
  // gpu_query's rule for a node's series: its Hostname, or none and its
  // instance (older serves wrote no Hostname).
  const std::string names =
      "__name__=~\"gpudoctor_process_gpu_memory_bytes|gpudoctor_process_cpu_"
      "percent|gpudoctor_gpu_processes\"";
  promsource::check_node_name(node);
  return "{" + names + ",Hostname=\"" + node + "\"} or {" + names +
         ",Hostname=\"\"," + promsource::instance_matcher(node) + "}";
}

FleetProcesses fleet_processes_from_series(
    const std::string& node, const std::vector<http::prom::Series>& answer) {
  FleetProcesses out;
  out.node = node;
  out.asked = true;
  bool serve_there = false;
  std::map<std::pair<int, std::string>, FleetProcess> rows;
  for (const auto& s : answer) {
    if (s.points.empty()) continue;
    const double v = s.points.back().v;
    const std::string& name = s.label("__name__");
    if (name == "gpudoctor_gpu_processes") {
      serve_there = true;
      continue;
    }
    const bool mem = name == "gpudoctor_process_gpu_memory_bytes";
    if (!mem && name != "gpudoctor_process_cpu_percent") continue;
    serve_there = true;
    int gpu = -1;
    try {
      const std::string& g = s.label("gpu");
      size_t used = 0;
      gpu = std::stoi(g, &used);
      if (used != g.size() || gpu < 0) continue;
    } catch (const std::exception&) {
      continue;  // not serve's label: not a row
    }
    const std::string pid = cut_process_text(s.label("pid"));
    if (pid.empty()) continue;
    auto key = std::make_pair(gpu, pid);
    auto it = rows.find(key);
    if (it == rows.end()) {
      if (rows.size() >= 4 * kMaxFleetProcesses) {
        ++out.left_out;
        continue;
      }
      it = rows.emplace(key, FleetProcess{}).first;
      it->second.pid = pid;
      it->second.gpu = gpu;
      it->second.user = cut_process_text(s.label("user"));
      it->second.name = cut_process_text(s.label("comm"));
    }
    if (!std::isfinite(v) || v < 0) continue;
    if (mem && v < 1.8e19)
      it->second.gpu_mem_bytes = static_cast<uint64_t>(v);
    else if (!mem)
      it->second.cpu_pct = v;
  }
  for (auto& [k, r] : rows) out.rows.push_back(std::move(r));
  if (!serve_there) out.note = kProcessesNotReported;
  order_and_bound(out);
  return out;
}

}  // namespace gd::monitor
