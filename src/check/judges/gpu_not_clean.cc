// gpu-not-clean: a GPU to be given to a job (--gpus, default all) that is
// not free: NVML lists a process on it (alive: who; gone or a zombie: a
// dead job's memory), memory is in use beyond what the driver reserves, or
// a CUDA process holds its device file (/dev/nvidia<minor> and nvidia-uvm)
// without NVML listing it. NVML-only clients (nvidia-smi, DCGM, a node
// exporter, another gpudoctor: they map no CUDA library but the driver's
// own, model/orphan_holders.h) and the persistence daemon (no nvidia-uvm)
// hold device files on every healthy node and do not count.
#include <fmt/format.h>

#include <algorithm>

#include "check/judges/judge_util.h"
#include "model/orphan_holders.h"

namespace gd::check {
namespace {

const ProcessSample* find_process(const Sample& s, uint32_t pid) {
  for (const auto& p : s.processes)
    if (p.pid == pid) return &p;
  return nullptr;
}

std::string who(const ProcessSample* p) {
  if (!p || p->name.empty()) return "";
  return fmt::format(" ({}, {})", p->name, p->user.empty() ? "?" : p->user);
}

bool listed_on(const GpuSample& g, uint32_t pid) {
  if (!g.processes) return false;
  return std::any_of(g.processes->begin(), g.processes->end(),
                     [pid](const GpuProcess& p) { return p.pid == pid; });
}

struct Dirt {
  std::vector<std::string> evidence;
  std::vector<uint32_t> pids;
  std::string brief;  // the first, most telling
  void add(std::string what, std::string brief_text = "") {
    if (brief.empty()) brief = brief_text.empty() ? what : brief_text;
    evidence.push_back(std::move(what));
  }
};

void nvml_processes(const Input& in, const GpuSample& g, Dirt& d) {
  if (!g.processes) return;
  for (const auto& p : *g.processes) {
    const ProcessSample* ps = find_process(*in.sample, p.pid);
    std::string mem = p.used_bytes ? gib_text(*p.used_bytes) : "unknown memory";
    bool gone = !ps || ps->state == "missing";
    bool zombie = ps && (ps->state == "Z" || ps->state == "X");
    d.pids.push_back(p.pid);
    if (gone || zombie)
      d.add(fmt::format("pid {} holds {} and is {} (a dead job's memory)",
                        p.pid, mem, gone ? "gone" : "a zombie"),
            fmt::format("holds {}; pid {} {}", mem, p.pid,
                        gone ? "gone" : "a zombie"));
    else
      d.add(fmt::format("pid {}{} uses {}", p.pid, who(ps), mem));
  }
}

void unaccounted_memory(const GpuSample& g, Dirt& d) {
  if (!g.mem_used_bytes) return;
  uint64_t listed = 0;
  if (g.processes)
    for (const auto& p : *g.processes) listed += p.used_bytes.value_or(0);
  uint64_t used = *g.mem_used_bytes;
  // More than the driver reserves on any GPU (a few hundred MiB; the
  // largest known under 1 GiB) is held by somebody (the same bound as
  // who's and the orphaned-memory rule's).
  if (used <= listed || used - listed <= kOrphanMarginBytes) return;
  d.add(
      fmt::format("{} in use that no listed process accounts for (more "
                  "than the {} a driver reserves)",
                  gib_text(used - listed), gib_text(kOrphanMarginBytes)),
      fmt::format("holds {} with no process listed", gib_text(used - listed)));
}

void device_holders(const Input& in, const GpuSample& g, Dirt& d) {
  if (!in.holders) return;
  const GpuInfo* info = find_gpu_info(*in.header, g.index);
  const int minor = info && info->minor_number ? *info->minor_number : g.index;
  const std::string node = fmt::format("nvidia{}", minor);
  for (const auto& h : *in.holders) {
    bool this_gpu =
        std::find(h.devices.begin(), h.devices.end(), node) != h.devices.end();
    bool uvm = std::find(h.devices.begin(), h.devices.end(), "nvidia-uvm") !=
               h.devices.end();
    if (!this_gpu || !uvm || maps_only_the_driver(h.libs)) continue;
    if (listed_on(g, h.pid)) continue;  // named above
    d.pids.push_back(h.pid);
    d.add(fmt::format("pid {} ({}, {}) holds /dev/{} and nvidia-uvm", h.pid,
                      h.name.empty() ? "?" : h.name,
                      h.user.empty() ? "?" : h.user, node),
          fmt::format("pid {} ({}, {}) holds /dev/{}", h.pid,
                      h.name.empty() ? "?" : h.name,
                      h.user.empty() ? "?" : h.user, node));
  }
}

bool selected(const Input& in, int gpu) {
  return in.all_gpus ||
         std::find(in.gpus.begin(), in.gpus.end(), gpu) != in.gpus.end();
}

}  // namespace

void judge_gpu_not_clean(const Input& in, std::vector<CheckFinding>& out,
                         std::vector<NotJudged>& not_judged) {
  std::vector<int> no_list;
  for (const auto& g : in.sample->gpus) {
    if (g.lost || g.stale || !selected(in, g.index)) continue;
    if (!g.processes) no_list.push_back(g.index);
    Dirt d;
    nvml_processes(in, g, d);
    unaccounted_memory(g, d);
    device_holders(in, g, d);
    if (d.evidence.empty()) continue;
    CheckFinding c = gpu_finding(
        in, g.index, "gpu-not-clean", "critical", "is not free for a job",
        fmt::format("{}", fmt::join(d.evidence, "; ")),
        fmt::format("See gpudoctor who {}; end what is left with gpudoctor "
                    "kill (a dead job's memory whose holder is gone needs "
                    "nvidia-smi -r -i {} once nothing holds the GPU).",
                    g.index, g.index),
        d.brief);
    c.finding.pids = d.pids;
    out.push_back(std::move(c));
  }
  if (!no_list.empty())
    not_judged.push_back(
        {"gpu-not-clean",
         fmt::format("needs the GPUs' process lists; NVML gave none for "
                     "GPU {} (memory and device files were judged)",
                     join_ints(no_list))});
  if (!in.holders)
    not_judged.push_back(
        {"gpu-not-clean", "the device files' holders were not scanned"});
  else if (!in.unreadable_fd_pids.empty())
    not_judged.push_back(
        {"gpu-not-clean",
         fmt::format("{} processes' open files could not be read (run as "
                     "root): they may hold a GPU's device file",
                     in.unreadable_fd_pids.size())});
}

}  // namespace gd::check
