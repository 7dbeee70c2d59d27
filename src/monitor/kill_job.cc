#include "monitor/kill_job.h"

#include <unistd.h>

namespace gd::monitor {

using namespace procmgmt;

class KillJob::Observer : public KillObserver {
 public:
  explicit Observer(KillJob& job) : job_(job) {}
  void on_signal(uint32_t pid, int sig, const std::string& error) override {
    add({false, pid, sig, error, 0, 0});
  }
  void on_escalate(size_t alive, double timeout_s) override {
    add({true, 0, 0, "", alive, timeout_s});
  }

 private:
  void add(KillStep step) {
    {
      std::lock_guard lock(job_.mu_);
      job_.steps_.push_back(std::move(step));
    }
    job_.wake_();
  }
  KillJob& job_;
};

KillJob::KillJob(std::vector<uint32_t> pids,
                 std::function<Sample()> take_sample, TraceHeader header,
                 KillJobOptions options, std::function<void()> wake)
    : pids_(std::move(pids)),
      take_sample_(std::move(take_sample)),
      header_(std::move(header)),
      options_(std::move(options)),
      wake_(std::move(wake)) {
  thread_ = std::thread([this] { plan_now(); });
}

KillJob::~KillJob() {
  if (thread_.joinable()) thread_.join();
}

KillJob::Stage KillJob::stage() const {
  std::lock_guard lock(mu_);
  return stage_;
}

bool KillJob::can_proceed() const {
  return plan_.refusals.empty() && plan_.not_found.empty() &&
         !plan_.targets.empty();
}

std::vector<KillStep> KillJob::steps() const {
  std::lock_guard lock(mu_);
  return steps_;
}

std::string KillJob::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

void KillJob::plan_now() {
  Stage next = Stage::kPlanned;
  try {
    before_ = take_sample_();
    // As `gpudoctor kill PID...`: the processes the user chose, no --tree,
    // no --any, no --user; every safety rule of the plan applies.
    KillRequest request{pids_, std::nullopt, "", false, false};
    context_ =
        KillContext{static_cast<uint32_t>(getpid()),
                    static_cast<uint32_t>(geteuid()), nvml_gpu_pids(before_)};
    procs_ = ProcSnapshot::read(options_.proc_root);
    plan_ = plan_kill(request, context_, procs_);
  } catch (const std::exception& e) {
    std::lock_guard lock(mu_);
    error_ = e.what();
    next = Stage::kFailed;
  }
  {
    std::lock_guard lock(mu_);
    stage_ = next;
  }
  wake_();
}

void KillJob::confirm() {
  {
    std::lock_guard lock(mu_);
    if (stage_ != Stage::kPlanned || !can_proceed()) return;
    stage_ = Stage::kRunning;
  }
  if (thread_.joinable()) thread_.join();  // the planning thread, done
  thread_ = std::thread([this] { run_session(); });
}

void KillJob::run_session() {
  Stage next = Stage::kDone;
  try {
    KillSessionOptions o{options_.proc_root, options_.dev_prefix,
                         options_.signal, options_.timeout_s, options_.force};
    Observer observer(*this);
    outcome_ = run_kill_session(plan_, context_, procs_, before_, header_,
                                take_sample_, o, observer);
  } catch (const std::exception& e) {
    std::lock_guard lock(mu_);
    error_ = e.what();
    next = Stage::kFailed;
  }
  {
    std::lock_guard lock(mu_);
    stage_ = next;
  }
  wake_();
}

}  // namespace gd::monitor
