#include "monitor/remote_feed.h"

#include <chrono>
#include <stdexcept>

#include "common/signal_stack.h"
#include "monitor/remote_json.h"

namespace gd::monitor {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

http::Url parse_remote_url(const std::string& url) {
  http::Url u = http::parse_url(url);
  if (url.find('?') != std::string::npos)
    throw std::invalid_argument("'" + url.substr(0, 200) +
                                "': a query is not expected");
  return u;
}

RemoteFeed::RemoteFeed(RemoteOptions options)
    : options_(std::move(options)),
      url_(parse_remote_url(options_.url)),
      // Until serve's status says its own interval.
      interval_s_(options_.interval_s > 0 ? options_.interval_s : 1) {
  auto f = std::make_shared<Frame>();
  f->kind = SourceKind::kRemote;
  f->source_name = options_.url;
  f->header = std::make_shared<const TraceHeader>();
  f->problem = "connecting to " + options_.url + " ...";
  publish(std::move(f));
}

RemoteFeed::~RemoteFeed() { stop(); }

void RemoteFeed::start() {
  thread_ = std::thread([this] { run(); });
}

void RemoteFeed::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cancel_.cancel();  // the request in flight ends now
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RemoteFeed::run() {
  SignalStack signal_stack;  // for top's crash handler (terminal.h)
  auto next = Clock::now();
  for (;;) {
    poll_once();
    next += std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(interval_s_));
    if (next < Clock::now()) next = Clock::now();
    std::unique_lock lock(mu_);
    if (cv_.wait_until(lock, next, [&] { return stopping_; })) return;
  }
}

void RemoteFeed::poll_once() {
  const auto t0 = Clock::now();
  std::string problem;
  auto get = [&](const std::string& path) -> std::optional<std::string> {
    http::Request req;
    req.path = path;
    req.total_s = options_.request_timeout_s;
    http::Reply r = http::send(url_, options_.who, req, cancel_);
    if (!r.ok) {
      problem = r.error;
      return std::nullopt;
    }
    if (r.status != 200) {
      problem = options_.url + path + " answered HTTP " +
                std::to_string(r.status) +
                (r.status == 401 ? " (needs --auth-file)" : "");
      return std::nullopt;
    }
    return std::move(r.body);
  };

  if (auto body = get("/api/v1/status")) {
    try {
      RemoteStatus st = parse_remote_status(*body);
      interval_s_ =
          options_.interval_s > 0 ? options_.interval_s : st.interval_s;
      bool new_header =
          !header_ || header_to_json(*header_) != header_to_json(st.header);
      if (new_header) {
        header_ = std::make_shared<const TraceHeader>(std::move(st.header));
        history_.emplace(*header_);
        last_t_ = 0;
      }
      if (st.sample && st.sample->t > last_t_) {
        last_t_ = st.sample->t;
        sample_ = std::make_shared<const Sample>(std::move(*st.sample));
        history_->add(*header_, *sample_);
      }
    } catch (const std::exception& e) {
      problem = options_.url + "/api/v1/status: " + e.what();
    }
  }
  if (problem.empty()) {
    if (auto body = get("/api/v1/findings")) {
      try {
        auto fs = parse_remote_findings(*body);
        sort_findings(fs.findings);
        findings_ = std::make_shared<const FindingsState>(std::move(fs));
      } catch (const std::exception& e) {
        problem = options_.url + "/api/v1/findings: " + e.what();
      }
    }
  }

  if (cancel_.cancelled()) return;  // stopping: "stopped" is no news
  auto f = std::make_shared<Frame>();
  f->kind = SourceKind::kRemote;
  f->source_name = options_.url;
  f->header = header_ ? header_ : std::make_shared<const TraceHeader>();
  f->sample = sample_;
  if (history_ && sample_)
    f->history = std::make_shared<const GpuHistory>(*history_);
  f->findings = findings_;
  f->interval_s = interval_s_;
  f->problem = problem;
  f->collect_s = std::chrono::duration<double>(Clock::now() - t0).count();
  publish(std::move(f));
}

}  // namespace gd::monitor
