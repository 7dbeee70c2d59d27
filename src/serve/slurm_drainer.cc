#include "serve/slurm_drainer.h"

#include <spdlog/spdlog.h>

#include "serve/log.h"

namespace gd {

SlurmDrainer::SlurmDrainer(SlurmDrainConfig config,
                           std::unique_ptr<SlurmNodeControl> control)
    : control_(std::move(control)), brakes_(config, *control_) {
  status_.config = std::move(config);
}

SlurmDrainer::~SlurmDrainer() { stop(); }

void SlurmDrainer::start() {
  thread_ = std::thread([this] { run(); });
}

void SlurmDrainer::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SlurmDrainer::post(std::optional<SlurmDrainCandidate> worst, double now) {
  {
    std::lock_guard lock(mu_);
    worst_ = std::move(worst);
    now_ = now;
    pending_ = true;
  }
  cv_.notify_all();
}

SlurmDrainStatus SlurmDrainer::status() const {
  std::lock_guard lock(mu_);
  return status_;
}

void SlurmDrainer::run() {
  for (;;) {
    std::optional<SlurmDrainCandidate> worst;
    double now = 0;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || pending_; });
      if (stopping_) return;
      pending_ = false;
      worst = worst_;
      now = now_;
    }
    auto actions = brakes_.step(worst, now);
    for (const auto& a : actions) {
      const bool done = a.result == "drained" || a.result == "resumed";
      const auto level = a.result == "failed" ? spdlog::level::err
                         : done               ? spdlog::level::warn
                                              : spdlog::level::info;
      spdlog::log(level,
                  "msg=\"slurm {}: {}\" node={} finding={} reason={} "
                  "detail={}",
                  a.action, a.result, serve_log::q(status_.config.node),
                  a.finding.empty() ? "-" : a.finding, serve_log::q(a.reason),
                  serve_log::q(a.detail));
    }
    std::lock_guard lock(mu_);
    status_.actions = brakes_.actions();
    status_.drains = brakes_.drains();
    status_.resumes = brakes_.resumes();
    status_.own_reason = brakes_.own_reason();
  }
}

}  // namespace gd
