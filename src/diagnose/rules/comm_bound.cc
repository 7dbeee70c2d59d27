// comm-bound: a GPU job waits on the network between nodes. Its GPUs
// saw-tooth -- busy, then idle, in step across the job's GPUs, again and
// again (every step of data-parallel training ends in an all-reduce the
// GPUs wait for) -- while the RDMA ports the job uses run near their line
// rate or their transmit-wait counter grows (the port had data to send and
// no credits: the fabric pushed back). Silent when the idle phases have
// another cause: the job's CPU side is saturated (input-bound) or the host
// waits on storage (io-bound); when the only busy port is one the job does
// not use; and when the GPUs are busy throughout.
//
// The ports a job uses are the ports near its GPUs: on the same NUMA node
// (rdma_common.h says why; the trace does not record PCIe switches).
// A job is the GPU processes of one launcher (GpuJob::group), as
// input-bound groups its ranks.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "diagnose/evidence.h"
#include "diagnose/rule.h"
#include "diagnose/rules/rdma_common.h"
#include "diagnose/rules/util_cycle.h"
#include "diagnose/rules/workload_common.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "comm-bound";

// The job's mean utilisation below 30% is an idle phase (waiting on the
// all-reduce), at 70% or more a compute phase; in between keeps the phase.
constexpr double kIdleUtilPct = 30;
constexpr double kBusyUtilPct = 70;
// Idle "in step": every GPU of the job under the idle mark at once, in
// most idle samples. One GPU idling alone is imbalance, not the network.
constexpr double kMinInStepFraction = 0.8;
// Three full busy/idle swings make a pattern, not one slow step.
constexpr double kMinCycleCount = 3;
// Near line rate: 80% of the port's rate in either direction; RDMA
// all-reduce reaches ~90% of the link on a clean fabric, so 80% is a port
// that is the bottleneck while it carries the collective.
constexpr double kNearLineFraction = 0.8;
// The port is near line rate in at least this many samples (and a tenth of
// the job's samples): the communication phases, not one burst.
constexpr double kMinNearLineSamples = 3;
constexpr double kMinNearLineShare = 0.1;
// Or port_xmit_wait grows in this many of the idle samples, and in a third
// of them: the port waited for credits while the job waited on it, the
// fabric is congested even below line rate. (Any port with traffic counts
// a little wait now and then; growth in step with the idle phases is what
// ties it to the job.)
constexpr double kMinWaitSamples = 3;
constexpr double kMinWaitShare = 0.3;
// As input-bound: workers at 85% of a core are saturated; the main process
// at 95% when there are none. Half the idle samples saturated, or waiting
// on disk (iowait 10%), is another rule's cause.
constexpr double kWorkerSaturatedPct = 85;
constexpr double kMainSaturatedPct = 95;
constexpr double kIowaitPct = 10;
constexpr double kMaxOtherCauseShare = 0.5;

struct PortUse {
  Stat share;       // of the line rate, every sample
  Stat idle_share;  // while the job's GPUs were idle
  size_t near_line = 0;
  rdma::Growth wait;
  size_t idle_waits = 0;  // idle samples in which the wait grew
  double rate_gbps = 0;   // lowest rate seen
};

struct Job {
  Job() : cycle(kIdleUtilPct, kBusyUtilPct) {}
  workload::ProcLabel label;
  std::set<int> gpus;
  size_t samples = 0, busy = 0, idle = 0, in_step = 0;
  size_t saturated = 0, iowait = 0;  // of the idle samples
  Span idle_span;
  UtilCycle cycle;
  std::map<std::pair<std::string, int>, PortUse> ports;
};

class CommBoundRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader& header, const Config& config) override {
    header_ = &header;
    auto th = [&](const char* name, double v) {
      return workload::threshold(config, kId, name, v);
    };
    idle_ = th("idle_util_pct", kIdleUtilPct);
    busy_ = th("busy_util_pct", kBusyUtilPct);
    in_step_ = th("min_in_step_fraction", kMinInStepFraction);
    cycles_ = th("min_cycle_count", kMinCycleCount);
    near_line_ = th("near_line_fraction", kNearLineFraction);
    near_samples_ = th("min_near_line_samples", kMinNearLineSamples);
    near_share_ = th("min_near_line_share", kMinNearLineShare);
    wait_samples_ = th("min_wait_samples", kMinWaitSamples);
    wait_share_ = th("min_wait_share", kMinWaitShare);
    other_cause_ = th("max_other_cause_share", kMaxOtherCauseShare);
  }

  void observe(const Sample& s, const SampleContext& ctx) override {
    if (!s.host.rdma_ports || s.host.rdma_ports->empty()) return;
    // The job's ranks by launcher: GPUs and whether its CPU side is
    // saturated now.
    struct Now {
      std::set<int> gpus;
      bool saturated = false;
      uint32_t root = 0;
    };
    std::map<uint32_t, Now> now;
    for (const GpuJob& j : ctx.gpu_jobs(kWorkerSaturatedPct)) {
      Now& n = now[j.group];
      if (n.root == 0 || j.pid < n.root) n.root = j.pid;
      n.gpus.insert(j.gpus.begin(), j.gpus.end());
      const bool sat = j.workers_known > 0
                           ? j.workers_cpu_bound * 4 >= j.workers_known * 3
                           : j.main_cpu_pct >= kMainSaturatedPct;
      n.saturated = n.saturated || sat;
    }
    for (auto& [group, n] : now) {
      if (n.gpus.empty()) continue;
      auto it = jobs_.find(group);
      if (it == jobs_.end()) {
        if (jobs_.size() >= kMaxJobs) continue;
        it = jobs_.emplace(group, Job{}).first;
      }
      observe_job(s, n.gpus, n.saturated, n.root, it->second);
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [group, job] : jobs_) {
      if (job.idle == 0 || static_cast<double>(job.cycle.cycles()) < cycles_)
        continue;
      const double idle = static_cast<double>(job.idle);
      if (static_cast<double>(job.in_step) < in_step_ * idle) continue;
      if (static_cast<double>(job.saturated) >= other_cause_ * idle) continue;
      if (static_cast<double>(job.iowait) >= other_cause_ * idle) continue;
      const PortUse* best = nullptr;
      const std::pair<std::string, int>* best_key = nullptr;
      for (const auto& [key, use] : job.ports) {
        const bool near = static_cast<double>(use.near_line) >= near_samples_ &&
                          static_cast<double>(use.near_line) >=
                              near_share_ * static_cast<double>(job.samples);
        const double idle_waits = static_cast<double>(use.idle_waits);
        const bool waits =
            idle_waits >= wait_samples_ && idle_waits >= wait_share_ * idle;
        if (!near && !waits) continue;
        if (!best || use.near_line + use.idle_waits >
                         best->near_line + best->idle_waits) {
          best = &use;
          best_key = &key;
        }
      }
      if (!best) continue;
      out.push_back(
          make_finding(job, best_key->first, best_key->second, *best));
    }
    return out;
  }

 private:
  static constexpr size_t kMaxJobs = 64;

  void observe_job(const Sample& s, const std::set<int>& gpus, bool saturated,
                   uint32_t root, Job& job) {
    if (job.label.pid == 0 || root < job.label.pid)
      for (const ProcessSample& p : s.processes)
        if (p.pid == root) job.label.update(p);
    job.gpus.insert(gpus.begin(), gpus.end());
    double sum = 0, max = 0;
    size_t n = 0;
    for (const GpuSample& g : s.gpus) {
      if (!gpus.contains(g.index) || !workload::readable(g) || !g.util_pct)
        continue;
      sum += *g.util_pct;
      max = std::max(max, *g.util_pct);
      ++n;
    }
    if (n == 0) return;
    const double mean = sum / static_cast<double>(n);
    ++job.samples;
    job.cycle.add(s.t, mean);
    const bool idle = mean < idle_;
    if (mean >= busy_) ++job.busy;
    if (idle) {
      ++job.idle;
      job.idle_span.add(s.t);
      if (max < idle_) ++job.in_step;
      if (saturated) ++job.saturated;
      if (s.host.cpu_iowait_pct && *s.host.cpu_iowait_pct >= kIowaitPct)
        ++job.iowait;
    }
    for (const RdmaPort& p : *s.host.rdma_ports) {
      bool used = false;
      for (int g : gpus) used = used || rdma::near_gpu(*header_, p.device, g);
      if (!used) continue;
      auto key = std::make_pair(p.device, p.port);
      auto it = job.ports.find(key);
      if (it == job.ports.end()) {
        if (job.ports.size() >= kRdmaPortsMax) continue;
        it = job.ports.emplace(std::move(key), PortUse{}).first;
      }
      PortUse& use = it->second;
      const size_t grew = use.wait.grew_samples;
      use.wait.add(s.t, p.port_xmit_wait_total);
      if (idle && use.wait.grew_samples > grew) ++use.idle_waits;
      if (p.state != "ACTIVE" || !p.rate_gbps || *p.rate_gbps <= 0) continue;
      if (use.rate_gbps == 0 || *p.rate_gbps < use.rate_gbps)
        use.rate_gbps = *p.rate_gbps;
      const double bytes =
          std::max(p.rx_bytes_per_s.value_or(0), p.tx_bytes_per_s.value_or(0));
      const double share = bytes * 8 / (*p.rate_gbps * 1e9);
      use.share.add(share);
      if (idle) use.idle_share.add(share);
      if (share >= near_line_) ++use.near_line;
    }
  }

  Finding make_finding(const Job& job, const std::string& device, int port,
                       const PortUse& use) const {
    const std::string name = rdma::port_name(device, port);
    Finding f;
    f.id = kId;
    f.severity = "warning";
    f.gpus.assign(job.gpus.begin(), job.gpus.end());
    if (job.label.pid) f.pids = {job.label.pid};
    f.start = job.idle_span.first;
    f.end = job.idle_span.last;
    const double duty = static_cast<double>(job.busy) /
                        static_cast<double>(std::max<size_t>(job.samples, 1));
    f.title = fmt::format(
        "{} waits on the network: GPUs idle in step while "
        "RDMA port {} is saturated",
        job.label.pid ? job.label.text() : "a GPU job", name);
    std::vector<std::string> parts;
    parts.push_back(fmt::format(
        "GPUs {} busy (util >= {:.0f}%) in {} of {} samples, idle together "
        "in {} ({} swings, period ~{:.1f} s; idle phases {})",
        join_ints(f.gpus), busy_, format_fraction(duty), job.samples,
        format_fraction(static_cast<double>(job.idle) /
                        static_cast<double>(job.samples)),
        job.cycle.cycles(), job.cycle.period_mean(),
        format_range(job.idle_span.first, job.idle_span.last)));
    if (!use.share.empty())
      parts.push_back(fmt::format(
          "port {} at up to {} of its {:g} Gb/s (mean {}, {} while the GPUs "
          "idled), near line rate in {} samples",
          name, format_fraction(use.share.max), use.rate_gbps,
          format_fraction(use.share.mean()),
          use.idle_share.empty() ? std::string("n/a")
                                 : format_fraction(use.idle_share.mean()),
          use.near_line));
    if (use.wait.growth > 0)
      parts.push_back(fmt::format(
          "port_xmit_wait grew by {} in {} samples, {} of them while the "
          "GPUs idled (the port waited for credits)",
          use.wait.growth, use.wait.grew_samples, use.idle_waits));
    parts.push_back(
        "the job's CPU side is not saturated and the host does "
        "not wait on storage in the idle phases");
    f.evidence = fmt::format("{}", fmt::join(parts, "; "));
    std::string first;
    const RdmaPortInfo* info = rdma::find_port_info(*header_, device, port);
    if (info && info->max_rate_gbps && use.rate_gbps > 0 &&
        use.rate_gbps < 0.95 * *info->max_rate_gbps)
      first = fmt::format(
          "First: {} runs at {:g} of {:g} Gb/s (see rdma-port-degraded): "
          "fix the link. ",
          name, use.rate_gbps, *info->max_rate_gbps);
    f.action = fmt::format(
        "{}The job spends its idle phases in collectives over {}. Overlap "
        "communication with compute (DDP gradient bucketing, FSDP prefetch), "
        "compress gradients (PowerSGD, FP16/BF16 all-reduce hooks), make "
        "fewer and larger all-reduces (larger buckets, gradient "
        "accumulation), and check that NCCL uses every port near the GPUs "
        "(NCCL_IB_HCA, NCCL_CROSS_NIC, NCCL_TOPO_FILE; NCCL_DEBUG=INFO shows "
        "the rings).",
        first, name);
    return f;
  }

  const TraceHeader* header_ = nullptr;
  double idle_ = kIdleUtilPct, busy_ = kBusyUtilPct,
         in_step_ = kMinInStepFraction, cycles_ = kMinCycleCount,
         near_line_ = kNearLineFraction, near_samples_ = kMinNearLineSamples,
         near_share_ = kMinNearLineShare, wait_samples_ = kMinWaitSamples,
         wait_share_ = kMinWaitShare, other_cause_ = kMaxOtherCauseShare;
  std::map<uint32_t, Job> jobs_;  // <= kMaxJobs
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_comm_bound_rule() {
  return std::make_unique<CommBoundRule>();
}

}  // namespace gd
