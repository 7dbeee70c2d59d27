// orphaned-memory: GPU memory is held but no live process accounts for it.
// Two signs, per GPU and sample:
//   - NVML lists a process that is a zombie ("Z") or "missing" from /proc;
//   - memory used is well beyond what the live listed processes hold plus
//     the driver's own reservation.
// Silent when the collector runs in a container PID namespace: there NVML's
// host PIDs are "missing" by construction (that is pid-namespace-blind).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>

#include "diagnose/evidence.h"
#include "diagnose/rule.h"
#include "diagnose/rules/workload_common.h"

namespace gd {
namespace {

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
  uint64_t max_bytes = 0;
};

struct PerGpu {
  size_t known = 0;  // samples where the process list was known
  Span orphan;       // samples with a dead holder or unaccounted memory
  Stat unaccounted;  // bytes beyond live processes, over orphan samples
  Stat used;
  std::map<uint32_t, DeadHolder> dead;  // bounded by the GPU's process ids
};

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
    if (blind_) return;
    // A GPU pid without an entry in processes[] is of unknown liveness and
    // counted as live; only "Z" / "missing" entries are dead.
    const ProcessTree& tree = ctx.tree();
    for (const GpuSample& g : s.gpus) {
      if (!workload::readable(g) || !g.processes) continue;
      PerGpu& st = gpus_[g.index];
      ++st.known;
      bool orphan = false;
      bool all_bytes_known = true;
      double live_bytes = 0;
      for (const GpuProcess& gp : *g.processes) {
        const ProcessSample* p = tree.find(gp.pid);
        if (!gp.used_bytes) all_bytes_known = false;
        if (p && is_dead_state(p->state)) {
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
            d.max_bytes = std::max(d.max_bytes, *gp.used_bytes);
        } else if (gp.used_bytes) {
          // Live, or simply not in processes[] (unknown: give it the benefit).
          live_bytes += static_cast<double>(*gp.used_bytes);
        }
      }
      double unaccounted = 0;
      const GpuInfo* info = find_gpu_info(header_, g.index);
      if (g.mem_used_bytes && all_bytes_known) {
        double used = static_cast<double>(*g.mem_used_bytes);
        unaccounted = used - live_bytes - reserve_;
        double floor = info && info->memory_total_bytes
                           ? min_unaccounted_fraction_ *
                                 static_cast<double>(*info->memory_total_bytes)
                           : 0;
        if (unaccounted > floor && unaccounted > 0) orphan = true;
        if (orphan) st.used.add(used);
      }
      if (orphan) {
        st.orphan.add(s.t);
        st.unaccounted.add(std::max(0.0, unaccounted + reserve_));
      }
    }
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
            d.name.empty() ? "" : " " + d.name, d.state, gib_text(d.max_bytes),
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
      f.evidence = fmt::format(
          "in {} of {} samples ({}): {} used, {} of it not held by any live "
          "process (driver allowance {}){}{}",
          format_fraction(frac), st.known,
          format_range(st.orphan.first, st.orphan.last),
          st.used.empty() ? std::string("memory")
                          : gib_text(static_cast<uint64_t>(st.used.max)),
          gib_text(static_cast<uint64_t>(st.unaccounted.max)),
          gib_text(static_cast<uint64_t>(reserve_)),
          holders.empty() ? "" : "; NVML still lists " + holders,
          reap.empty() ? "" : "; " + reap);
      if (!reap.empty()) {
        f.action = fmt::format(
            "{}: the parent must wait() for its child. Fix or restart the "
            "parent; killing it hands the zombie to init, which reaps it, and "
            "the driver then frees the memory. If memory stays held, find who "
            "still has /dev/nvidia* open (fuser -v /dev/nvidia*; the trace "
            "does "
            "not record open device files).",
            reap);
      } else {
        f.action = fmt::format(
            "The owner is gone but the driver still holds the memory. Find who "
            "still has /dev/nvidia* open (fuser -v /dev/nvidia* or lsof "
            "/dev/nvidia*; the trace does not record open device files) and "
            "end "
            "it; if nobody holds it, the context is stuck in the driver: reset "
            "the idle GPU (nvidia-smi --gpu-reset -i {}) or reboot.",
            index);
      }
      out.push_back(std::move(f));
    }
    return out;
  }

 private:
  TraceHeader header_;
  bool blind_ = false;
  double reserve_ = kDriverReserveGiB * kGiB,
         min_unaccounted_fraction_ = kMinUnaccountedFraction,
         min_fraction_ = kMinFraction, min_samples_ = kMinSamples;
  std::map<int, PerGpu> gpus_;
};

}  // namespace

std::unique_ptr<Rule> make_orphaned_memory_rule() {
  return std::make_unique<OrphanedMemoryRule>();
}

}  // namespace gd
