// gpu-idle-allocated: a live process holds GPU memory but the GPU has been
// idle for the whole window -- a forgotten notebook kernel, a finished job
// that did not exit, a service that loaded a model nobody calls. An idle GPU
// with only the driver's small reservation and no process is not a finding,
// and dead holders (zombie / missing) are orphaned-memory's.
// On Kubernetes the GPU is also allocated when no process holds it: the
// kubelet gave it to a pod (the sample's pod_allocations) whose containers
// run nothing on it, and no other pod can have it until that pod ends.
// Those pods are named too, and make the finding on their own.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"
#include "diagnose/rules/workload_common.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "gpu-idle-allocated";
using workload::kMiB;

// At or under 5% is idle: NVML shows 1-3% for a context doing nothing but
// housekeeping.
constexpr double kIdleUtilPct = 5;
// "The whole window", allowing a stray blip (a health probe, nvidia-smi).
constexpr double kMinIdleFraction = 0.95;
// A bare CUDA context is ~300-500 MiB; from 512 MiB on, the process holds
// real allocations (a model, a cache).
constexpr double kMinHeldMiB = 512;
// The holder must be there for most of the window.
constexpr double kMinHolderFraction = 0.9;
// Jobs pause (checkpoint, evaluation on CPU) for minutes; under 5 minutes
// of idleness is not worth a finding.
constexpr double kMinWindowS = 300;

struct Holder {
  workload::ProcLabel label;
  size_t samples = 0;
  uint64_t max_bytes = 0;
  double last_t = 0;
};

// A pod the kubelet allocated the GPU to (its whole GPU or a time-slicing
// replica), and in how many of the GPU's samples one of its processes was
// on the GPU.
struct AllocatedPod {
  size_t allocated = 0;
  bool ran = false;  // one of its processes was on the GPU in a sample
  double last_t = 0;
};

struct PerGpu {
  workload::Window window;
  size_t idle = 0;
  Stat util;
  bool held = false;  // any holder, swept or not
  // The GPU's processes, and those that ended able to be named (swept).
  std::map<uint32_t, Holder> holders;
  // "namespace/name" -> the pod's allocation of this GPU, over the samples
  // that had the kubelet's list (not those of a host off Kubernetes, nor a
  // history written before it kept them).
  std::map<std::string, AllocatedPod> pods;
  workload::Window listed;
};

std::string pod_key(const std::string& namespace_, const std::string& name) {
  return namespace_ + "/" + name;
}

class GpuIdleAllocatedRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader&, const Config& config) override {
    auto th = [&](const char* name, double def) {
      return workload::threshold(config, kId, name, def);
    };
    idle_util_ = th("idle_util_pct", kIdleUtilPct);
    min_idle_fraction_ = th("min_idle_fraction", kMinIdleFraction);
    min_held_ = th("min_held_mib", kMinHeldMiB) * kMiB;
    min_holder_fraction_ = th("min_holder_fraction", kMinHolderFraction);
    min_window_s_ = th("min_window_s", kMinWindowS);
  }

  void observe(const Sample& s, const SampleContext& ctx) override {
    process_lists_.add(s);
    const ProcessTree& tree = ctx.tree();
    for (const GpuSample& g : s.gpus) {
      if (!workload::readable(g) || !g.util_pct) continue;
      PerGpu& st = gpus_[g.index];
      st.window.add(s.t);
      st.util.add(*g.util_pct);
      if (*g.util_pct <= idle_util_) ++st.idle;
      observe_pods(s, g, tree, st);
      if (!g.processes) continue;
      for (const GpuProcess& gp : *g.processes) {
        if (!gp.used_bytes || static_cast<double>(*gp.used_bytes) < min_held_)
          continue;
        const ProcessSample* p = tree.find(gp.pid);
        if (p && is_dead_state(p->state)) continue;
        if (!p && !s.processes.empty())
          continue;  // not visible: cannot name it
        Holder& h = st.holders[gp.pid];
        st.held = true;
        h.label.pid = gp.pid;
        if (p) h.label.update(*p);
        ++h.samples;
        h.last_t = s.t;
        h.max_bytes = std::max(h.max_bytes, *gp.used_bytes);
      }
    }
    if (sweep_.due()) sweep(s.t);
  }

  // The pods the kubelet allocated GPU g to in this sample, and whether
  // one of their processes is on it. Without the kubelet's list (not on
  // Kubernetes, or it did not answer) no pod is counted.
  void observe_pods(const Sample& s, const GpuSample& g,
                    const ProcessTree& tree, PerGpu& st) {
    if (!s.pod_allocations) return;
    st.listed.add(s.t);
    // The pods with a process on this GPU, built once per sample and GPU
    // and only when a pod is allocated to it.
    std::vector<std::string> running;
    bool running_built = false;
    for (const PodAllocation& a : *s.pod_allocations) {
      if (a.gpu != g.index || a.name.empty()) continue;
      const std::string key = pod_key(a.namespace_, a.name);
      AllocatedPod& pod = st.pods[key];
      // A pod's replicas of one GPU count once per sample.
      if (pod.allocated > 0 && pod.last_t == s.t) continue;
      ++pod.allocated;
      pod.last_t = s.t;
      st.held = true;
      if (pod.ran) continue;
      if (!running_built) {
        running = pods_on(g, tree);
        running_built = true;
      }
      pod.ran = std::find(running.begin(), running.end(), key) != running.end();
    }
  }

  static std::vector<std::string> pods_on(const GpuSample& g,
                                          const ProcessTree& tree) {
    std::vector<std::string> keys;
    if (!g.processes) return keys;
    for (const GpuProcess& gp : *g.processes) {
      const ProcessSample* p = tree.find(gp.pid);
      if (p && p->pod && p->pod->name && p->pod->namespace_)
        keys.push_back(pod_key(*p->pod->namespace_, *p->pod->name));
    }
    return keys;
  }

  // A holder that ended holding in fewer than min_holder_fraction of its
  // GPU's samples never will: the GPU's samples only grow. Nor will a pod
  // no longer allocated.
  void sweep(double now) {
    for (auto& [index, st] : gpus_) {
      const double n = static_cast<double>(st.window.samples);
      workload::sweep_ended(
          st.holders, now, [](const Holder& h) { return h.last_t; },
          [&](uint32_t, const Holder& h) {
            return static_cast<double>(h.samples) < min_holder_fraction_ * n;
          });
      workload::sweep_ended(
          st.pods, now, [](const AllocatedPod& p) { return p.last_t; },
          [&, listed = static_cast<double>(st.listed.samples)](
              const std::string&, const AllocatedPod& p) {
            return static_cast<double>(p.allocated) <
                   min_holder_fraction_ * listed;
          });
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [index, st] : gpus_) {
      if (st.window.samples == 0 || st.window.span() < min_window_s_) continue;
      double n = static_cast<double>(st.window.samples);
      if (static_cast<double>(st.idle) / n < min_idle_fraction_) continue;
      Finding f;
      f.id = kId;
      f.severity = "info";
      f.gpus = {index};
      std::string who;
      uint64_t total = 0;
      for (const auto& [pid, h] : st.holders) {
        if (static_cast<double>(h.samples) / n < min_holder_fraction_) continue;
        f.pids.push_back(pid);
        total += h.max_bytes;
        who += fmt::format("{}{} holds {}", who.empty() ? "" : ", ",
                           h.label.text(), gib_text(h.max_bytes));
      }
      // Pods allocated the GPU for the window that ran nothing on it.
      std::vector<std::string> unused;
      if (st.listed.span() >= min_window_s_)
        for (const auto& [key, pod] : st.pods)
          if (static_cast<double>(pod.allocated) /
                      static_cast<double>(st.listed.samples) >=
                  min_holder_fraction_ &&
              !pod.ran)
            unused.push_back(key);
      if (f.pids.empty() && unused.empty()) continue;
      if (!unused.empty())
        who += fmt::format(
            "{}the kubelet allocated it to pod{} {}, which ran no process on "
            "it",
            who.empty() ? "" : "; ", unused.size() > 1 ? "s" : "",
            fmt::join(unused, ", "));
      f.start = st.window.start;
      f.end = st.window.end;
      f.title = fmt::format("GPU {} is allocated but idle", index);
      f.evidence = fmt::format(
          "GPU {} util at or under {:.0f}% in {} of {} samples (mean {:.1f}%, "
          "max "
          "{:.0f}%) over {} while {}",
          index, idle_util_, format_fraction(static_cast<double>(st.idle) / n),
          st.window.samples, st.util.mean(), st.util.max,
          format_range(st.window.start, st.window.end), who);
      if (!f.pids.empty())
        f.action = fmt::format(
            "{} of GPU memory is reserved for work that is not running. End "
            "or restart the idle process{} (a notebook kernel: shut it down, "
            "or del the model and torch.cuda.empty_cache()); if it is a "
            "service, check it still gets requests. Schedulers can reap idle "
            "GPU allocations automatically.",
            gib_text(total), f.pids.size() > 1 ? "es" : "");
      if (!unused.empty()) {
        const std::string& first = unused.front();
        const size_t slash = first.find('/');
        f.action += fmt::format(
            "{}The GPU stays the pod's until the pod ends: if it is not "
            "needed, delete it or scale its workload down (kubectl delete pod "
            "-n {} {}); a pod that needs no GPU should not request "
            "nvidia.com/gpu.",
            f.action.empty() ? "" : " ", first.substr(0, slash),
            first.substr(slash + 1));
      }
      out.push_back(std::move(f));
    }
    return out;
  }

  // A held GPU that was idle in a window shorter than min_window_s may
  // only be between steps; a busy one was judged (it is not idle).
  std::optional<std::string> not_judged() const override {
    if (auto why = process_lists_.not_judged()) return why;
    double longest = -1;
    for (const auto& [index, st] : gpus_) {
      if (st.window.samples == 0 || !st.held ||
          st.window.span() >= min_window_s_ ||
          static_cast<double>(st.idle) /
                  static_cast<double>(st.window.samples) <
              min_idle_fraction_)
        continue;
      longest = std::max(longest, st.window.span());
    }
    if (longest < 0) return std::nullopt;
    return needs_time("an idle GPU that holds memory", min_window_s_, longest);
  }

 private:
  double idle_util_ = kIdleUtilPct, min_idle_fraction_ = kMinIdleFraction,
         min_held_ = kMinHeldMiB * kMiB,
         min_holder_fraction_ = kMinHolderFraction, min_window_s_ = kMinWindowS;
  std::map<int, PerGpu> gpus_;
  ProcessListsSeen process_lists_;
  workload::EndedSweep sweep_;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_gpu_idle_allocated_rule() {
  return std::make_unique<GpuIdleAllocatedRule>();
}

}  // namespace gd
