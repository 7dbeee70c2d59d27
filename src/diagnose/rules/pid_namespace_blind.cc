// pid-namespace-blind: the collector ran in a container PID namespace, and
// the host PIDs that NVML reports do not exist in its /proc. GPU processes
// cannot be named, and their memory must not be called orphaned.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "diagnose/evidence.h"
#include "diagnose/rule.h"
#include "diagnose/rules/workload_common.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "pid-namespace-blind";
// Evidence lists at most this many pids (the count covers all).
constexpr size_t kMaxNamedPids = 16;

class PidNamespaceBlindRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader& header, const Config&) override {
    container_ = header.host.pid_namespace == "container";
  }

  void observe(const Sample& s, const SampleContext& ctx) override {
    if (!container_) return;
    const ProcessTree& tree = ctx.tree();
    bool any = false;
    for (const GpuSample& g : s.gpus) {
      if (!workload::readable(g) || !g.processes) continue;
      for (const GpuProcess& gp : *g.processes) {
        const ProcessSample* p = tree.find(gp.pid);
        if (p && p->state != "missing") continue;
        any = true;
        gpus_.insert(g.index);
        if (pids_.size() < kMaxNamedPids)
          pids_.insert(gp.pid);
        else
          more_pids_ = true;
      }
    }
    if (any) blind_.add(s.t);
    window_.add(s.t);
  }

  std::vector<Finding> finish() override {
    if (!container_ || blind_.empty()) return {};
    Finding f;
    f.id = kId;
    f.severity = "info";
    f.gpus.assign(gpus_.begin(), gpus_.end());
    f.pids.assign(pids_.begin(), pids_.end());
    f.start = blind_.first;
    f.end = blind_.last;
    std::vector<int> pid_ints(pids_.begin(), pids_.end());
    f.title = "GPU processes cannot be named from inside this container";
    f.evidence = fmt::format(
        "the collector ran in a container PID namespace; NVML listed pids {}{} "
        "on GPU(s) {} that its /proc does not have, in {} of {} samples ({})",
        join_ints(pid_ints), more_pids_ ? " and more" : "",
        join_ints(std::vector<int>(gpus_.begin(), gpus_.end())), blind_.count,
        window_.samples, format_range(blind_.first, blind_.last));
    f.action =
        "Their memory is not orphaned: these are host PIDs of processes this "
        "namespace cannot see. To name GPU processes and check their CPU side, "
        "run gpudoctor on the host, or give its container the host PID "
        "namespace (docker run --pid=host, Kubernetes hostPID: true).";
    return {f};
  }

 private:
  bool container_ = false;
  Span blind_;
  workload::Window window_;
  std::set<int> gpus_;
  std::set<uint32_t> pids_;
  bool more_pids_ = false;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_pid_namespace_blind_rule() {
  return std::make_unique<PidNamespaceBlindRule>();
}

}  // namespace gd
