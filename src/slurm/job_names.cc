#include "slurm/job_names.h"

#include <signal.h>

#include <algorithm>
#include <cstdlib>

#include "common/run_program.h"
#include "common/slurm_job_id.h"

namespace gd::slurm {

std::string scontrol_path_from_env() {
  const char* env = std::getenv("GPUDOCTOR_SCONTROL");
  return env && *env ? std::string(env) : std::string("scontrol");
}

std::optional<ScontrolJob> ask_scontrol(const std::string& scontrol,
                                        const std::string& id,
                                        std::chrono::milliseconds deadline,
                                        std::string* why,
                                        std::atomic<pid_t>* running) {
  auto say = [&](std::string text) {
    if (why) *why = std::move(text);
  };
  if (!is_slurm_job_id(id)) {
    say("not a Slurm job id");
    return std::nullopt;
  }
  ProgramOptions options;
  options.deadline_s = std::chrono::duration<double>(deadline).count();
  options.max_output = JobNames::kMaxOutput;
  options.with_stderr = false;
  options.kill_past_cap = true;
  options.running = running;
  ProgramResult r = run_program({scontrol, "show", "job", "-o", id}, options);
  if (!r.started) {
    say(r.error);
    return std::nullopt;
  }
  if (r.timed_out) {
    say(scontrol + " did not answer within " +
        std::to_string(deadline.count()) + " ms");
    return std::nullopt;
  }
  if (r.exit_code != 0 && !r.output_cut) {
    say(scontrol + " exited with " +
        (r.exit_code ? std::to_string(*r.exit_code) : "a signal"));
    return std::nullopt;
  }
  auto job = parse_scontrol_job(r.output, id);
  if (!job) say(scontrol + " printed no line for job " + id);
  return job;
}

JobNames::JobNames(std::string scontrol, std::chrono::milliseconds deadline)
    : scontrol_(std::move(scontrol)), deadline_(deadline) {}

JobNames::~JobNames() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  // A call in flight would hold the join up to its deadline: end it.
  if (pid_t pgid = running_.load(); pgid > 0) ::kill(-pgid, SIGKILL);
  if (worker_.joinable()) worker_.join();
}

bool JobNames::answered(const std::string& id, Clock::time_point now) const {
  auto it = cache_.find(id);
  return it != cache_.end() && it->second.expires > now;
}

std::optional<SlurmJob> JobNames::lookup(const std::string& id) {
  if (!is_slurm_job_id(id)) return std::nullopt;
  const auto now = Clock::now();
  std::lock_guard lock(mu_);
  auto it = cache_.find(id);
  if (it != cache_.end()) {
    it->second.used = now;
    if (it->second.expires > now) return it->second.job;
  }
  if (stop_ || queue_.size() >= kMaxQueued ||
      std::find(queue_.begin(), queue_.end(), id) != queue_.end())
    return it != cache_.end() ? it->second.job : std::nullopt;
  queue_.push_back(id);
  if (!worker_.joinable()) worker_ = std::thread([this] { run(); });
  cv_.notify_one();
  // An expired answer stands until the new one comes.
  return it != cache_.end() ? it->second.job : std::nullopt;
}

void JobNames::wait(const std::vector<std::string>& ids,
                    Clock::time_point until) {
  std::unique_lock lock(mu_);
  answered_cv_.wait_until(lock, until, [&] {
    const auto now = Clock::now();
    return std::all_of(ids.begin(), ids.end(), [&](const std::string& id) {
      return !is_slurm_job_id(id) || answered(id, now);
    });
  });
}

void JobNames::store(const std::string& id, std::optional<SlurmJob> job) {
  const auto now = Clock::now();
  std::lock_guard lock(mu_);
  if (cache_.size() >= kMaxEntries && !cache_.contains(id)) {
    auto oldest = std::min_element(cache_.begin(), cache_.end(),
                                   [](const auto& a, const auto& b) {
                                     return a.second.used < b.second.used;
                                   });
    cache_.erase(oldest);
  }
  Entry& e = cache_[id];
  e.expires =
      now + (job ? std::chrono::duration_cast<Clock::duration>(kKnownFor)
                 : std::chrono::duration_cast<Clock::duration>(kUnknownFor));
  e.used = now;
  e.job = std::move(job);
  answered_cv_.notify_all();
}

void JobNames::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    std::string id = std::move(queue_.front());
    queue_.pop_front();
    const bool backing_off = Clock::now() < backoff_until_;
    lock.unlock();
    std::optional<SlurmJob> job;
    if (!backing_off) {
      std::string why;
      ++calls_;
      auto got = ask_scontrol(scontrol_, id, deadline_, &why, &running_);
      if (got) {
        job = std::move(got->job);
      } else if (why.find("did not answer") != std::string::npos) {
        std::lock_guard relock(mu_);
        backoff_until_ = Clock::now() + kBackoff;
      }
    }
    store(id, std::move(job));
    lock.lock();
  }
}

}  // namespace gd::slurm
