#include "monitor/kill_job.h"

#include <unistd.h>

#include "common/signal_stack.h"

namespace gd::monitor {

using namespace procmgmt;

namespace {

class LocalKill : public KillBackend {
 public:
  LocalKill(std::function<Sample()> take_sample, TraceHeader header)
      : take_sample_(std::move(take_sample)), header_(std::move(header)) {}

  Planned plan(const std::vector<uint32_t>& pids,
               const KillJobOptions& o) override {
    Planned p;
    p.before = take_sample_();
    // As `gpudoctor kill PID...`: the processes the user chose, no --tree,
    // no --any, no --user; every safety rule of the plan applies.
    KillRequest request{pids, {}, "", false, false};
    p.procs = ProcSnapshot::read(o.proc_root);
    context_ = make_kill_context(static_cast<uint32_t>(getpid()), header_,
                                 p.before, p.procs, o.proc_root, o.dev_prefix);
    p.plan = plan_kill(request, context_, p.procs);
    planned_ = p;
    return p;
  }

  KillOutcome run(const KillJobOptions& o, KillObserver& observer) override {
    KillSessionOptions so;
    so.proc_root = o.proc_root;
    so.dev_prefix = o.dev_prefix;
    so.signal = o.signal;
    so.timeout_s = o.timeout_s;
    so.force = o.force;
    return run_kill_session(planned_.plan, context_, planned_.procs,
                            planned_.before, header_, take_sample_, so,
                            observer);
  }

 private:
  std::function<Sample()> take_sample_;
  TraceHeader header_;
  KillContext context_;
  Planned planned_;
};

}  // namespace

std::unique_ptr<KillBackend> local_kill_backend(
    std::function<Sample()> take_sample, TraceHeader header) {
  return std::make_unique<LocalKill>(std::move(take_sample), std::move(header));
}

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
                 std::unique_ptr<KillBackend> backend, KillJobOptions options,
                 std::function<void()> wake)
    : pids_(std::move(pids)),
      backend_(std::move(backend)),
      options_(std::move(options)),
      wake_(std::move(wake)) {
  thread_ = std::thread([this] { plan_now(); });
}

KillJob::KillJob(std::vector<uint32_t> pids,
                 std::function<Sample()> take_sample, TraceHeader header,
                 KillJobOptions options, std::function<void()> wake)
    : KillJob(std::move(pids),
              local_kill_backend(std::move(take_sample), std::move(header)),
              std::move(options), std::move(wake)) {}

KillJob::~KillJob() {
  backend_->cancel();
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
  SignalStack signal_stack;  // for top's crash handler
  Stage next = Stage::kPlanned;
  try {
    KillBackend::Planned p = backend_->plan(pids_, options_);
    plan_ = std::move(p.plan);
    before_ = std::move(p.before);
    procs_ = std::move(p.procs);
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

void KillJob::confirm(bool force) {
  {
    std::lock_guard lock(mu_);
    if (stage_ != Stage::kPlanned || !can_proceed()) return;
    // Read by the session thread, which starts below.
    options_.force = force;
    stage_ = Stage::kRunning;
  }
  if (thread_.joinable()) thread_.join();  // the planning thread, done
  thread_ = std::thread([this] { run_session(); });
}

void KillJob::run_session() {
  SignalStack signal_stack;  // for top's crash handler
  Stage next = Stage::kDone;
  try {
    Observer observer(*this);
    outcome_ = backend_->run(options_, observer);
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
