#include "serve/fleet_view.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cmath>
#include <stdexcept>

#include "serve/event_stream.h"
#include "serve/fleet_json.h"
#include "serve/gzip_body.h"

namespace gd {

FleetView::FleetView(std::unique_ptr<monitor::FleetSource> source,
                     EventHub* events)
    : source_(std::move(source)),
      events_(events),
      stop_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (stop_fd_ < 0) throw std::runtime_error("eventfd failed");
}

FleetView::~FleetView() {
  stop();
  ::close(stop_fd_);
}

void FleetView::start() {
  if (started_) return;
  started_ = true;
  source_->start();
  thread_ = std::thread([this] { watch(); });
}

void FleetView::stop() {
  if (!started_) return;
  started_ = false;
  const uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(stop_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  source_->stop();
}

void FleetView::watch() {
  uint64_t told = 0;
  for (;;) {
    pollfd fds[2] = {{source_->wake_fd(), POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) continue;  // EINTR
    if (fds[1].revents) return;
    source_->drain_wake();
    auto f = source_->latest();
    if (!f || f->seq == told) continue;
    told = f->seq;
    if (events_) events_->publish_fleet(fleet_event(*f));
  }
}

ApiReply FleetView::reply(double now, bool gzip) const {
  auto f = source_->latest();
  ApiReply r;
  if (!f) {
    r.status = 503;
    r.body = "{\"error\":\"the fleet has not been read yet\"}";
    return r;
  }
  const auto second = static_cast<int64_t>(std::floor(now));
  std::shared_ptr<const std::string> body, gz;
  {
    std::lock_guard lock(mu_);
    if (body_ && body_seq_ == f->seq && body_second_ == second) {
      body = body_;
      gz = gzip_;
    }
  }
  if (!body) {
    body = std::make_shared<const std::string>(fleet_json(*f, now));
    std::lock_guard lock(mu_);
    body_ = body;
    gzip_ = nullptr;
    body_seq_ = f->seq;
    body_second_ = second;
  }
  r.headers.emplace_back("Vary", "Accept-Encoding");
  if (!gzip) {
    r.shared_body = std::move(body);
    return r;
  }
  if (!gz) {
    gz = std::make_shared<const std::string>(gzip_body(*body));
    std::lock_guard lock(mu_);
    if (body_ == body) gzip_ = gz;
  }
  r.shared_body = std::move(gz);
  r.headers.emplace_back("Content-Encoding", "gzip");
  return r;
}

}  // namespace gd
