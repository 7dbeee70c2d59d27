// Runs the drain brakes (slurm_drain.h) on a thread of their own: the
// sampling loop posts each evaluation's drain-worthy finding and goes on;
// scontrol, with its deadline, never runs on the sampling path. Only the
// latest evaluation waits: a slow slurmctld skips evaluations, it never
// queues them.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "serve/slurm_drain.h"

namespace gd {

// What /metrics and GET /api/v1/slurm/actions show.
struct SlurmDrainStatus {
  SlurmDrainConfig config;
  std::deque<SlurmAction> actions;  // oldest first, at most kKeptActions
  std::map<std::string, uint64_t> drains, resumes;
  std::optional<std::string> own_reason;
};

class SlurmDrainer {
 public:
  SlurmDrainer(SlurmDrainConfig config,
               std::unique_ptr<SlurmNodeControl> control);
  ~SlurmDrainer();
  SlurmDrainer(const SlurmDrainer&) = delete;
  SlurmDrainer& operator=(const SlurmDrainer&) = delete;

  void start();
  // Waits for the call to scontrol in flight (bounded by its deadline).
  void stop();
  // Returns at once.
  void post(std::optional<SlurmDrainCandidate> worst, double now);
  SlurmDrainStatus status() const;

 private:
  void run();

  std::unique_ptr<SlurmNodeControl> control_;
  SlurmDrainBrakes brakes_;  // the worker thread's only
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool pending_ = false;
  std::optional<SlurmDrainCandidate> worst_;
  double now_ = 0;
  SlurmDrainStatus status_;
  std::thread thread_;
};

}  // namespace gd
