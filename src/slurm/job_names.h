// Slurm jobs' names, users and partitions for the job ids gpudoctor finds
// on processes (common/slurm_job_id.h), asked of `scontrol show job -o ID`
// off the caller's path: lookup() answers from a cache at once and queues
// what it lacks for a worker thread, which runs scontrol with a deadline
// per call. A slow or absent slurmctld costs the worker a deadline, never a
// caller; after one, the worker stops asking for kBackoff (every job is
// "unknown" meanwhile). The cache and the queue are bounded; entries
// expire, so a renamed job is seen again and a finished one leaves.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "model/sample.h"
#include "slurm/scontrol_job.h"

namespace gd::slurm {

// GPUDOCTOR_SCONTROL when set and not empty, else "scontrol" (on PATH).
std::string scontrol_path_from_env();

// One synchronous `scontrol show job -o ID` with `deadline`: the job, or
// nullopt (unknown job, no scontrol, slurmctld slow, garbage). `why` (when
// given) says which.
std::optional<ScontrolJob> ask_scontrol(const std::string& scontrol,
                                        const std::string& id,
                                        std::chrono::milliseconds deadline,
                                        std::string* why = nullptr,
                                        std::atomic<pid_t>* running = nullptr);

class JobNames {
 public:
  static constexpr std::chrono::milliseconds kDeadline{1000};
  static constexpr size_t kMaxEntries = 256, kMaxQueued = 64;
  // How long an answer is kept: a job found, one scontrol did not know.
  static constexpr std::chrono::seconds kKnownFor{300}, kUnknownFor{30};
  static constexpr std::chrono::seconds kBackoff{30};
  // scontrol's output read at most (one job's line is about 1-2 KiB).
  static constexpr size_t kMaxOutput = 64 * 1024;

  explicit JobNames(std::string scontrol = scontrol_path_from_env(),
                    std::chrono::milliseconds deadline = kDeadline);
  ~JobNames();  // kills a call in flight, joins the worker
  JobNames(const JobNames&) = delete;
  JobNames& operator=(const JobNames&) = delete;

  // The job if known and fresh; otherwise nullopt, and the id is queued
  // (not when the queue is full: a later lookup asks again). Never blocks
  // on scontrol.
  std::optional<SlurmJob> lookup(const std::string& id);
  // Waits until every id of `ids` has an answer (found or not) or `until`.
  void wait(const std::vector<std::string>& ids,
            std::chrono::steady_clock::time_point until);
  // Calls made to scontrol so far (tests, bench).
  size_t calls() const { return calls_.load(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    std::optional<SlurmJob> job;
    Clock::time_point expires;
    Clock::time_point used;  // for eviction
  };
  void run();
  void store(const std::string& id, std::optional<SlurmJob> job);
  bool answered(const std::string& id, Clock::time_point now) const;

  const std::string scontrol_;
  const std::chrono::milliseconds deadline_;
  mutable std::mutex mu_;
  std::condition_variable cv_;  // work queued, or stop
  std::condition_variable answered_cv_;
  std::unordered_map<std::string, Entry> cache_;
  std::deque<std::string> queue_;
  Clock::time_point backoff_until_{};
  bool stop_ = false;
  std::atomic<pid_t> running_{0};
  std::atomic<size_t> calls_{0};
  std::thread worker_;  // started at the first queued id
};

}  // namespace gd::slurm
