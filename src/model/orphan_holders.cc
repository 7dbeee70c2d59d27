#include "model/orphan_holders.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "common/elapsed_text.h"
#include "model/process_tree.h"

namespace gd {
namespace {

constexpr const char* kUvm = "nvidia-uvm";

// "nvidia0".."nvidia255": a per-GPU node (not nvidiactl, nvidia-uvm, ...).
bool is_gpu_node(const std::string& d) {
  return d.size() > 6 && d.compare(0, 6, "nvidia") == 0 &&
         std::all_of(d.begin() + 6, d.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c));
         });
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// A cgroup that names a unit or container, not the root every process of
// a plain host shares.
bool telling_cgroup(const std::optional<std::string>& c) {
  return c && !c->empty() && *c != "/" && *c != "0::/";
}

struct Scored {
  ProbableHolder h;
  double start = 0;
};

void compare_with_owner(const HolderCandidate& c, const VanishedOwner& o,
                        ProbableHolder& h) {
  if (!o.last_seen) return;
  const ProcessSample& was = *o.last_seen;
  const ProcessSample& p = c.proc;
  if (telling_cgroup(p.cgroup) && p.cgroup == was.cgroup) {
    h.score += 4;
    h.evidence.push_back(
        fmt::format("same cgroup as the vanished owner {}", o.pid));
  }
  if (!p.name.empty() && p.name == was.name) {
    h.score += 3;
    h.evidence.push_back(fmt::format(
        "same command ({}) as the vanished owner {}", p.name, o.pid));
  }
  if (!p.user.empty() && p.user == was.user) {
    h.score += 2;
    h.evidence.push_back(
        fmt::format("same user ({}) as the vanished owner {}", p.user, o.pid));
  }
  if (p.start_time && was.start_time && *p.start_time >= *was.start_time &&
      (!o.gone_at || *p.start_time <= *o.gone_at)) {
    h.score += 3;
    h.evidence.push_back(fmt::format(
        "started {} after the owner {} did{}",
        elapsed_words(*p.start_time - *was.start_time), o.pid,
        o.gone_at ? fmt::format(", {} before it vanished",
                                elapsed_words(*o.gone_at - *p.start_time))
                  : std::string()));
  }
}

}  // namespace

bool maps_only_the_driver(const std::vector<std::string>& libs) {
  return !libs.empty() &&
         std::all_of(libs.begin(), libs.end(), [](const std::string& l) {
           return l.starts_with("libcuda.so");
         });
}

bool may_hold_cuda_memory(const std::vector<std::string>& devices, int gpu) {
  if (!has(devices, kUvm)) return false;
  bool any_node = std::any_of(devices.begin(), devices.end(), is_gpu_node);
  return !any_node || has(devices, "nvidia" + std::to_string(gpu));
}

std::vector<ProbableHolder> rank_probable_holders(
    int gpu, std::span<const HolderCandidate> candidates,
    std::span<const VanishedOwner> owners, double now) {
  std::vector<Scored> scored;
  for (const HolderCandidate& c : candidates) {
    if (!may_hold_cuda_memory(c.devices, gpu) ||
        maps_only_the_driver(c.proc.libs))
      continue;
    Scored s;
    ProbableHolder& h = s.h;
    h.pid = c.proc.pid;
    h.this_gpu = has(c.devices, "nvidia" + std::to_string(gpu));
    if (h.this_gpu) {
      h.score += 8;
      h.evidence.push_back(
          fmt::format("has GPU {}'s device file and nvidia-uvm open ({})", gpu,
                      joined(c.devices)));
    } else {
      h.evidence.push_back(fmt::format(
          "has nvidia-uvm open but no per-GPU node ({}): its GPU cannot be "
          "told",
          joined(c.devices)));
    }
    if (!c.proc.libs.empty()) {
      h.score += 6;
      std::vector<std::string> runtime;
      for (const auto& l : c.proc.libs)
        if (!l.starts_with("libcuda.so")) runtime.push_back(l);
      h.evidence.push_back(fmt::format(
          "maps CUDA libraries ({}): a CUDA program's address space, as a "
          "forked child has",
          joined(runtime)));
    } else {
      h.evidence.push_back("its libraries are not known");
    }
    if (c.proc.ppid && *c.proc.ppid == 1) {
      h.score += 1;
      h.evidence.push_back(
          "re-parented to pid 1: the process that started it has exited");
    }
    for (const VanishedOwner& o : owners) compare_with_owner(c, o, h);
    if (c.proc.start_time) {
      s.start = *c.proc.start_time;
      h.evidence.push_back(
          fmt::format("running for {}", elapsed_words(now - s.start)));
    }
    scored.push_back(std::move(s));
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const Scored& a, const Scored& b) {
                     if (a.h.score != b.h.score) return a.h.score > b.h.score;
                     return a.h.pid < b.h.pid;
                   });
  std::vector<ProbableHolder> out;
  for (auto& s : scored) {
    if (out.size() == kMaxProbableHolders) break;
    out.push_back(std::move(s.h));
  }
  return out;
}

std::vector<HolderCandidate> holder_candidates(const Sample& s,
                                               const ProcessTree& tree) {
  std::vector<HolderCandidate> out;
  if (!s.device_holders) return out;
  std::vector<uint32_t> listed;
  for (const GpuSample& g : s.gpus)
    if (g.processes)
      for (const GpuProcess& p : *g.processes) listed.push_back(p.pid);
  for (const DeviceHolder& h : *s.device_holders) {
    if (std::find(listed.begin(), listed.end(), h.pid) != listed.end())
      continue;
    HolderCandidate c;
    if (const ProcessSample* p = tree.find(h.pid))
      c.proc = *p;
    else
      c.proc.pid = h.pid;
    c.devices = h.devices;
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<GpuOrphanHolders> probable_holders_in(const Sample& s,
                                                  const ProcessTree& tree,
                                                  bool pids_visible) {
  std::vector<GpuOrphanHolders> out;
  if (!s.device_holders || s.device_holders->empty()) return out;
  const std::vector<HolderCandidate> candidates = holder_candidates(s, tree);
  if (candidates.empty()) return out;
  for (const GpuSample& g : s.gpus) {
    if (g.lost || g.stale || !g.processes) continue;
    GpuOrphanHolders o;
    o.gpu = g.index;
    std::vector<VanishedOwner> owners;
    uint64_t listed_bytes = 0;
    bool sizes_known = true;
    for (const GpuProcess& gp : *g.processes) {
      if (!gp.used_bytes) sizes_known = false;
      listed_bytes += gp.used_bytes.value_or(0);
      const ProcessSample* p = tree.find(gp.pid);
      bool dead =
          p ? is_dead_state(p->state) && (pids_visible || p->state != "missing")
            : false;
      if (!dead) continue;
      o.dead_owners.push_back(gp.pid);
      VanishedOwner v;
      v.pid = gp.pid;
      if (p->state != "missing") v.last_seen = *p;
      owners.push_back(std::move(v));
    }
    bool unaccounted = sizes_known && g.mem_used_bytes &&
                       *g.mem_used_bytes > listed_bytes + kOrphanMarginBytes;
    if (o.dead_owners.empty() && !unaccounted) continue;
    o.holders = rank_probable_holders(g.index, candidates, owners, s.t);
    if (!o.holders.empty()) out.push_back(std::move(o));
  }
  return out;
}

std::string end_holders_advice(int gpu,
                               std::span<const ProbableHolder> holders) {
  if (holders.empty()) return "";
  std::string pids;
  for (const ProbableHolder& h : holders) pids += " " + std::to_string(h.pid);
  const bool one = holders.size() == 1;
  return fmt::format(
      "end the process{} still holding GPU {}'s device files{}: `gpudoctor "
      "kill{}`; the driver frees the memory when {} the files (a GPU reset "
      "cannot succeed while {} the GPU open)",
      one ? "" : "es", gpu, one ? "" : " (most likely first)", pids,
      one ? "it closes" : "the last of them closes",
      one ? "it holds" : "they hold");
}

}  // namespace gd
