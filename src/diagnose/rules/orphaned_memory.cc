// orphaned-memory: GPU memory is held but no live process accounts for it.
// Two signs, per GPU and sample:
//   - NVML lists a process that is a zombie ("Z") or "missing" from /proc;
//   - memory used is well beyond what the live listed processes hold plus
//     the driver's own reservation.
// Silent when the collector runs in a container PID namespace: there NVML's
// host PIDs are "missing" by construction (that is pid-namespace-blind).
// Where the trace recorded who held the device files (device_holders), the
// finding names the probable holder and says to end it; a reset is advised
// only when the recorder looked and nobody held them.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"
#include "diagnose/rules/workload_common.h"
#include "model/memory_owners.h"
#include "model/orphan_holders.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "orphaned-memory";
using workload::kGiB;

// NVML's "used" includes the driver's own reservation and per-context
// overhead not attributed to a process: ~0.3-0.8 GiB on A100/H100. 1 GiB
// leaves margin for that.
constexpr double kDriverReserveGiB = 1.0;
// And it must be a noticeable part of the card, not allocator rounding.
constexpr double kMinUnaccountedFraction = 0.05;
// A process that just exited frees its memory within a sample or two; half
// the window rules that out.
constexpr double kMinFraction = 0.5;
constexpr double kMinSamples = 3;

struct DeadHolder {
  std::string state, name;
  std::optional<uint32_t> ppid;
  std::string parent_name;
  size_t samples = 0;
  std::optional<uint64_t> max_bytes;  // unset: NVML gave no size
};

struct PerGpu {
  size_t known = 0;  // samples where the process list was known
  Span orphan;       // samples with a dead holder or unaccounted memory
  // Bytes no live process holds (used - live: memory_owners), over the
  // orphan samples where that is known.
  Stat not_owned;
  Stat used;
  std::map<uint32_t, DeadHolder> dead;  // bounded by the GPU's process ids
  // Who held the device files at the last look during the orphan, ranked;
  // `looked`: the trace recorded device files while memory was orphaned.
  bool looked = false;
  std::vector<ProbableHolder> holders;
  std::vector<ProcessSample> holder_procs;  // their entries, as last seen
};

// A GPU process as last seen alive, and when it was first seen dead: the
// facts a holder is compared with (same cgroup, command, user; started
// while it ran).
struct OwnerMemory {
  ProcessSample alive;
  std::optional<double> gone_at;
};
// GPU processes remembered at once; the oldest are forgotten beyond this.
constexpr size_t kMaxOwnersRemembered = 4096;

class OrphanedMemoryRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = header;
    blind_ = header.host.pid_namespace == "container";
    reserve_ = workload::threshold(config, kId, "driver_reserve_gib",
                                   kDriverReserveGiB) *
               kGiB;
    min_unaccounted_fraction_ = workload::threshold(
        config, kId, "min_unaccounted_fraction", kMinUnaccountedFraction);
    min_fraction_ =
        workload::threshold(config, kId, "min_fraction", kMinFraction);
    min_samples_ = workload::threshold(config, kId, "min_samples", kMinSamples);
  }

  void observe(const Sample& s, const SampleContext& ctx) override {
    process_lists_.add(s);
    if (blind_) return;
    // A GPU pid without an entry in processes[] is of unknown liveness and
    // counted as live; only "Z" / "missing" entries are dead.
    const ProcessTree& tree = ctx.tree();
    for (const GpuSample& g : s.gpus) {
      if (!workload::readable(g) || !g.processes) continue;
      PerGpu& st = gpus_[g.index];
      ++st.known;
      bool orphan = false;
      for (const GpuProcess& gp : *g.processes) {
        const ProcessSample* p = tree.find(gp.pid);
        if (!p || !is_dead_state(p->state)) continue;
        orphan = true;
        DeadHolder& d = st.dead[gp.pid];
        d.state = p->state;
        if (!p->name.empty()) d.name = p->name;
        if (p->ppid) {
          d.ppid = p->ppid;
          if (const ProcessSample* parent = tree.find(*p->ppid))
            d.parent_name = parent->name;
        }
        ++d.samples;
        if (gp.used_bytes)
          d.max_bytes = std::max(d.max_bytes.value_or(0), *gp.used_bytes);
      }
      // The figure who, top and the dashboard show (model/memory_owners.h):
      // used minus what the live processes hold. A dead process without a
      // size does not make it unknown; a live one does.
      const MemoryOwners owners = memory_owners(g, tree);
      const GpuInfo* info = find_gpu_info(header_, g.index);
      if (owners.not_owned_bytes) {
        double not_owned = static_cast<double>(*owners.not_owned_bytes);
        double floor = info && info->memory_total_bytes
                           ? min_unaccounted_fraction_ *
                                 static_cast<double>(*info->memory_total_bytes)
                           : 0;
        double beyond = not_owned - reserve_;
        if (beyond > floor && beyond > 0) orphan = true;
        if (orphan) st.not_owned.add(not_owned);
      }
      if (orphan && g.mem_used_bytes)
        st.used.add(static_cast<double>(*g.mem_used_bytes));
      if (orphan) {
        st.orphan.add(s.t);
        if (s.device_holders) note_holders(s, tree, g, st);
      }
    }
    remember_owners(s, tree);
  }

  // Remembers each listed process as last seen alive, and when it was
  // first seen dead.
  void remember_owners(const Sample& s, const ProcessTree& tree) {
    for (const GpuSample& g : s.gpus) {
      if (!g.processes) continue;
      for (const GpuProcess& gp : *g.processes) {
        const ProcessSample* p = tree.find(gp.pid);
        if (!p) continue;
        auto it = owners_.find(gp.pid);
        if (!is_dead_state(p->state)) {
          if (it == owners_.end() && owners_.size() >= kMaxOwnersRemembered)
            owners_.erase(owners_.begin());
          owners_[gp.pid] = {*p, std::nullopt};
        } else if (it != owners_.end() && !it->second.gone_at) {
          it->second.gone_at = s.t;
        }
      }
    }
  }

  void note_holders(const Sample& s, const ProcessTree& tree,
                    const GpuSample& g, PerGpu& st) {
    st.looked = true;
    const std::vector<HolderCandidate> candidates = holder_candidates(s, tree);
    std::vector<VanishedOwner> owners;
    for (const GpuProcess& gp : *g.processes) {
      const ProcessSample* p = tree.find(gp.pid);
      if (!p || !is_dead_state(p->state)) continue;
      VanishedOwner v;
      v.pid = gp.pid;
      if (auto it = owners_.find(gp.pid); it != owners_.end()) {
        v.last_seen = it->second.alive;
        v.gone_at = it->second.gone_at.value_or(s.t);
      }
      owners.push_back(std::move(v));
    }
    st.holders = rank_probable_holders(g.index, candidates, owners, s.t);
    st.holder_procs.clear();
    for (const ProbableHolder& h : st.holders)
      for (const HolderCandidate& c : candidates)
        if (c.proc.pid == h.pid) st.holder_procs.push_back(c.proc);
  }

  // "pid 4321 python (user bob): has GPU 0's device file ...; ..."
  static std::string holders_text(const PerGpu& st) {
    std::string out;
    for (size_t i = 0; i < st.holders.size(); ++i) {
      const ProbableHolder& h = st.holders[i];
      const ProcessSample& p = st.holder_procs[i];
      std::string why;
      for (const auto& e : h.evidence) why += (why.empty() ? "" : ", ") + e;
      out += fmt::format("{}pid {}{}{}: {}", out.empty() ? "" : "; ", h.pid,
                         p.name.empty() ? "" : " " + p.name,
                         p.user.empty() ? "" : " (user " + p.user + ")", why);
    }
    return out;
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [index, st] : gpus_) {
      if (st.known == 0 || static_cast<double>(st.orphan.count) < min_samples_)
        continue;
      double frac =
          static_cast<double>(st.orphan.count) / static_cast<double>(st.known);
      if (frac < min_fraction_) continue;

      Finding f;
      f.id = kId;
      f.severity = "critical";
      f.gpus = {index};
      f.start = st.orphan.first;
      f.end = st.orphan.last;
      std::string holders, reap;
      std::vector<uint32_t> parents;
      for (const auto& [pid, d] : st.dead) {
        f.pids.push_back(pid);
        holders += fmt::format(
            "{}pid {}{} (state {}, {} in {} samples{})",
            holders.empty() ? "" : "; ", pid,
            d.name.empty() ? "" : " " + d.name, d.state,
            d.max_bytes ? gib_text(*d.max_bytes) : "size not given by NVML,",
            d.samples,
            d.ppid
                ? fmt::format(", parent pid {}{}", *d.ppid,
                              d.parent_name.empty() ? "" : " " + d.parent_name)
                : "");
        if (d.state == "Z" && d.ppid) {
          if (std::find(parents.begin(), parents.end(), *d.ppid) ==
              parents.end())
            parents.push_back(*d.ppid);
          reap += fmt::format(
              "{}pid {}{} has not reaped its zombie child {}",
              reap.empty() ? "" : "; ", *d.ppid,
              d.parent_name.empty() ? "" : " (" + d.parent_name + ")", pid);
        }
      }
      for (uint32_t p : parents)
        if (std::find(f.pids.begin(), f.pids.end(), p) == f.pids.end())
          f.pids.push_back(p);

      f.title =
          st.dead.empty()
              ? fmt::format("GPU {} memory is held by no live process", index)
              : fmt::format("GPU {} memory is held by a dead process", index);
      const std::string held_by = holders_text(st);
      const std::string not_owned =
          st.not_owned.empty()
              ? std::string(
                    "how much of it no live process holds is unknown (NVML "
                    "gave no size for a live process)")
              : fmt::format(
                    "{} of it not held by any live process (driver allowance "
                    "{})",
                    gib_text(static_cast<uint64_t>(st.not_owned.max)),
                    gib_text(static_cast<uint64_t>(reserve_)));
      f.evidence = fmt::format(
          "in {} of {} samples ({}): {} used, {}{}{}{}", format_fraction(frac),
          st.known, format_range(st.orphan.first, st.orphan.last),
          st.used.empty() ? std::string("memory")
                          : gib_text(static_cast<uint64_t>(st.used.max)),
          not_owned, holders.empty() ? "" : "; NVML still lists " + holders,
          reap.empty() ? "" : "; " + reap,
          held_by.empty() ? ""
                          : "; still holding GPU " + std::to_string(index) +
                                "'s device files: " + held_by);
      for (const ProbableHolder& h : st.holders)
        if (std::find(f.pids.begin(), f.pids.end(), h.pid) == f.pids.end())
          f.pids.push_back(h.pid);
      if (!st.holders.empty()) {
        f.action = fmt::format(
            "The owner is gone, but {}. Then check with `gpudoctor who {}` "
            "that the memory is back.",
            end_holders_advice(index, st.holders), index);
      } else if (!reap.empty()) {
        f.action = fmt::format(
            "{}: the parent must wait() for its child. Fix or restart the "
            "parent; killing it hands the zombie to init, which reaps it, and "
            "the driver then frees the memory. If memory stays held, "
            "`gpudoctor who {}` names who still holds the GPU's device files.",
            reap, index);
      } else if (st.looked) {
        f.action = fmt::format(
            "The owner is gone and no CUDA process held GPU {0}'s device files "
            "when the recorder looked, so the context is stuck in the driver: "
            "once no process uses the GPU (`gpudoctor who {0}`), reset it "
            "(nvidia-smi --gpu-reset -i {0}, root) or reboot.",
            index);
      } else {
        f.action = fmt::format(
            "The owner is gone but the driver still holds the memory. Run "
            "`gpudoctor who {0}` on the host: it names the process still "
            "holding the GPU's device files (the trace did not record them) "
            "and how to end it; if nobody holds them, the context is stuck in "
            "the driver: reset the idle GPU (nvidia-smi --gpu-reset -i {0}) "
            "or reboot.",
            index);
      }
      out.push_back(std::move(f));
    }
    return out;
  }

  // Memory without a live owner in fewer samples than min_samples may be a
  // process that just exited (its memory is freed within a sample or two).
  std::optional<std::string> not_judged() const override {
    if (auto why = process_lists_.not_judged()) return why;
    size_t seen = 0;
    for (const auto& [index, st] : gpus_)
      if (st.orphan.count > 0 &&
          static_cast<double>(st.orphan.count) < min_samples_)
        seen = std::max(seen, st.orphan.count);
    if (seen == 0) return std::nullopt;
    return needs_samples("GPU memory no live process accounts for",
                         min_samples_, seen);
  }

 private:
  TraceHeader header_;
  bool blind_ = false;
  double reserve_ = kDriverReserveGiB * kGiB,
         min_unaccounted_fraction_ = kMinUnaccountedFraction,
         min_fraction_ = kMinFraction, min_samples_ = kMinSamples;
  std::map<int, PerGpu> gpus_;
  std::map<uint32_t, OwnerMemory> owners_;
  ProcessListsSeen process_lists_;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_orphaned_memory_rule() {
  return std::make_unique<OrphanedMemoryRule>();
}

}  // namespace gd
