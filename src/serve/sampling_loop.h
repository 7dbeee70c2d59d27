// The sampling loop of `serve` (its own thread): samples at the interval (GPU
// reads bounded by the Sampler's deadlines), writes history, re-runs the
// diagnosis rules over a sliding window for alerting, and publishes an
// immutable Snapshot after every sample.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "accounting/job_counters.h"
#include "collect/sampler.h"
#include "model/process_budget.h"
#include "serve/alerting.h"
#include "serve/alertmanager_client.h"
#include "serve/cmdline_exposure.h"
#include "serve/history.h"
#include "serve/serve_config.h"
#include "serve/snapshot.h"

namespace gd {

struct SamplingLoopOptions {
  double interval_s = 1.0;
  std::string instance;       // Alertmanager "instance" label (host:port)
  std::string generator_url;  // link back to /api/v1/findings
  std::string version;
  CmdlineExposure show_cmdline = CmdlineExposure::kRedacted;
  ProcessBudget process_budget;
  // Called on the sampling thread with every snapshot published (the
  // dashboard's live stream); must not block.
  std::function<void(const Snapshot&)> on_publish;
  // Called on the sampling thread with every evaluation's findings (serve
  // --slurm-drain); must not block.
  std::function<void(const std::vector<Finding>&, double now)> on_evaluate;
};

class SamplingLoop {
 public:
  // Publishes a first snapshot (header, no sample) at once. Every pointer
  // must outlive the SamplingLoop; history and alertmanager may be null.
  SamplingLoop(Sampler& sampler, History* history, SnapshotBox& box,
               ConfigHolder& config, AlertmanagerClient* alertmanager,
               SamplingLoopOptions options);
  ~SamplingLoop();
  SamplingLoop(const SamplingLoop&) = delete;
  SamplingLoop& operator=(const SamplingLoop&) = delete;

  void start();
  // Returns after the sample in progress (bounded by the deadline).
  void stop();
  // A sample begun after this call: the loop takes one now (published,
  // kept in history and diagnosed like any other) and this waits for it,
  // at most `wait`; then, or when the loop is stopping, the latest
  // published one. A remote kill re-reads NVML this way, so the sampler
  // keeps one thread and every kernel-log line still reaches history.
  std::shared_ptr<const Sample> sample_now(std::chrono::milliseconds wait);

 private:
  void run();
  void run_once();
  void evaluate(double now);
  void publish();
  void log_gpu_changes();
  void watch_store();

  Sampler& sampler_;
  History* history_;
  SnapshotBox& box_;
  ConfigHolder& config_;
  AlertmanagerClient* alertmanager_;
  SamplingLoopOptions options_;
  std::shared_ptr<const TraceHeader> header_;
  accounting::JobCounters jobs_;  // gpudoctor_job_*_total

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  // sample_now(): a sample is asked for; samples begun and finished.
  bool requested_ = false;
  uint64_t begun_ = 0, finished_ = 0;
  std::condition_variable finished_cv_;
  std::thread thread_;

  // State of the collection thread only.
  std::shared_ptr<const Sample> latest_;
  std::deque<std::shared_ptr<const Sample>> window_;
  std::vector<GpuCollectHealth> health_;
  std::map<int, int> last_xid_;
  double collect_duration_s_ = 0;
  uint64_t collections_ = 0;
  uint64_t processes_left_out_ = 0;
  double started_at_ = 0;
  AlertTracker tracker_;
  std::optional<double> evaluated_at_;
  DiagnoseWindow window_info_;
  // Of the latest evaluation.
  std::shared_ptr<const std::vector<NotJudged>> not_judged_;
  AlertPolicy policy_;
  double last_eval_ = 0, last_resend_ = 0, last_maintain_ = 0;
  double last_store_error_log_ = 0;
  // Per header GPU (same order as health_): the state last logged.
  std::vector<std::string> logged_gpu_state_;
  std::optional<StoreStatus> store_;
};

}  // namespace gd
