// dev-shm-small: a GPU job whose data-loader workers hand batches to the
// main process through shared memory (PyTorch's DataLoader does, via
// /dev/shm) runs where /dev/shm is small -- Docker's default is 64 MiB.
// Workers then die with "bus error" or the loader freezes. Silent for a job
// without workers (nothing is passed through /dev/shm) and when /dev/shm is
// large enough for its workers.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "diagnose/evidence.h"
#include "diagnose/not_judged.h"
#include "diagnose/rule.h"
#include "diagnose/rules/workload_common.h"

namespace gd {
namespace {
namespace GD_UNITY_ID {

constexpr const char* kId = "dev-shm-small";

// Below 1 GiB a few workers with prefetched image batches already fill it.
constexpr double kSmallMib = 1024;
// ...and each worker needs room for its prefetched batches (2 by default,
// a few tens of MiB each for images): 256 MiB a worker.
constexpr double kMinMibPerWorker = 256;
// The rule looks at the workers as any mark counts them (saturation plays
// no part here).
constexpr double kSaturatedPct = 85;

// One job (all its ranks, which share a container or a launcher): the
// first rank found names it.
struct JobState {
  workload::ProcLabel label;
  std::set<uint32_t> pids;
  std::set<int> gpus;
  uint64_t shm_bytes = 0;
  opt<uint32_t> ns_pid;
  size_t workers = 0;  // the most any rank had
  Span small;
};

class DevShmSmallRule : public Rule {
 public:
  const char* id() const override { return kId; }

  void begin(const TraceHeader&, const Config& config) override {
    small_bytes_ = workload::threshold(config, kId, "small_mib", kSmallMib) *
                   workload::kMiB;
    per_worker_bytes_ = workload::threshold(config, kId, "min_mib_per_worker",
                                            kMinMibPerWorker) *
                        workload::kMiB;
  }

  void observe(const Sample& s, const SampleContext& ctx) override {
    process_lists_.add(s);
    const ProcessTree& tree = ctx.tree();
    for (const GpuJob& job : ctx.gpu_jobs(kSaturatedPct)) {
      if (job.workers.empty()) continue;
      const ProcessSample* root = tree.find(job.pid);
      if (!root) continue;
      ++with_workers_;
      if (!root->dev_shm_bytes) continue;
      ++with_shm_;
      double shm = static_cast<double>(*root->dev_shm_bytes);
      double workers = static_cast<double>(job.workers.size());
      if (shm >= small_bytes_ || shm >= workers * per_worker_bytes_) continue;
      JobState& st = jobs_[job.group];
      if (st.pids.empty() || st.label.pid == job.pid) {
        st.label.update(*root);
        st.shm_bytes = *root->dev_shm_bytes;
        st.ns_pid = root->ns_pid;
      }
      st.pids.insert(job.pid);
      st.gpus.insert(job.gpus.begin(), job.gpus.end());
      st.workers = std::max(st.workers, job.workers.size());
      if (st.small.last != s.t || st.small.empty()) st.small.add(s.t);
    }
  }

  std::vector<Finding> finish() override {
    std::vector<Finding> out;
    for (const auto& [group, st] : jobs_) out.push_back(describe(st));
    return out;
  }

  // Without GPU process lists there is nothing to judge.
  // Nor where jobs with workers came without /dev/shm's size (a window
  // read from exporters' series, which do not carry it).
  std::optional<std::string> not_judged() const override {
    if (auto why = process_lists_.not_judged()) return why;
    if (with_workers_ == 0 || with_shm_ > 0) return std::nullopt;
    return fmt::format(
        "needs the size of /dev/shm as the GPU jobs see it (as gpudoctor "
        "record and serve read it); none came with the {} reading{} of a job "
        "with workers",
        with_workers_, with_workers_ == 1 ? "" : "s");
  }

 private:
  Finding describe(const JobState& st) const {
    Finding f;
    f.id = kId;
    f.severity = "warning";
    f.gpus.assign(st.gpus.begin(), st.gpus.end());
    f.pids.assign(st.pids.begin(), st.pids.end());
    uint32_t pid = st.label.pid;
    f.start = st.small.first;
    f.end = st.small.last;
    double mib = static_cast<double>(st.shm_bytes) / workload::kMiB;
    f.title = fmt::format(
        "/dev/shm is only {:.0f} MiB for {} and its {} "
        "data-loader workers",
        mib, st.label.text(), st.workers);
    std::string ranks =
        st.pids.size() == 1
            ? std::string()
            : fmt::format(" (each of its {} ranks alike)", st.pids.size());
    f.evidence = fmt::format(
        "{}{} on GPU{} {} sees a {:.0f} MiB /dev/shm with {} worker "
        "processes{}: {:.0f} MiB a worker, below {:.0f} MiB a worker and "
        "below {:.0f} MiB in all; {}",
        st.label.text(),
        st.ns_pid && *st.ns_pid != pid
            ? fmt::format(" (pid {} in its container)", *st.ns_pid)
            : std::string(),
        f.gpus.size() == 1 ? "" : "s", join_ints(f.gpus), mib, st.workers,
        ranks, mib / static_cast<double>(st.workers),
        per_worker_bytes_ / workload::kMiB, small_bytes_ / workload::kMiB,
        format_range(st.small.first, st.small.last));
    f.action =
        "Give the container a larger /dev/shm before workers die with \"bus "
        "error\" or the loader hangs: `docker run --shm-size=16g` (or "
        "`--ipc=host`); in Kubernetes mount an `emptyDir: {medium: Memory}` "
        "volume at /dev/shm. Fewer DataLoader workers only hide it.";
    return f;
  }

  double small_bytes_ = kSmallMib * workload::kMiB;
  double per_worker_bytes_ = kMinMibPerWorker * workload::kMiB;
  std::map<uint32_t, JobState> jobs_;
  ProcessListsSeen process_lists_;
  size_t with_workers_ = 0, with_shm_ = 0;
};

}  // namespace GD_UNITY_ID
using namespace GD_UNITY_ID;
}  // namespace

std::unique_ptr<Rule> make_dev_shm_small_rule() {
  return std::make_unique<DevShmSmallRule>();
}

}  // namespace gd
