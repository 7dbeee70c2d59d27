#include "monitor/remote_feed.h"

#include <httplib.h>

#include <chrono>
#include <stdexcept>

#include "monitor/remote_http.h"
#include "monitor/remote_json.h"

namespace gd::monitor {
namespace {

using Clock = std::chrono::steady_clock;

// A reply larger than this is not serve's (its status is ~60 KB with 512
// processes).
constexpr size_t kMaxReplyBytes = 16 << 20;

}  // namespace

RemoteUrl parse_remote_url(const std::string& url) {
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("'" + url + "': " + why);
  };
  std::string rest;
  std::string scheme;
  if (url.rfind("http://", 0) == 0) {
    scheme = "http://";
  } else if (url.rfind("https://", 0) == 0) {
    scheme = "https://";
  } else {
    throw bad("not an http:// or https:// URL");
  }
  rest = url.substr(scheme.size());
  if (rest.find_first_of("?#") != std::string::npos)
    throw bad("a query or fragment is not expected");
  auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  std::string prefix = slash == std::string::npos ? "" : rest.substr(slash);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  if (authority.empty()) throw bad("no host");
  if (authority.find('@') != std::string::npos)
    throw bad("put credentials in --auth-file, not in the URL");
  for (char c : authority + prefix)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f)
      throw bad("spaces or control characters");
  return {scheme + authority, prefix};
}

RemoteFeed::RemoteFeed(RemoteOptions options)
    : options_(std::move(options)),
      url_(parse_remote_url(options_.url)),
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
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RemoteFeed::run() {
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
  auto client_ptr = remote_client(options_, url_, options_.request_timeout_s);
  httplib::Client& client = *client_ptr;

  std::string problem;
  auto get = [&](const std::string& path) -> std::optional<std::string> {
    std::string body;
    bool too_big = false;
    auto res = client.Get(url_.prefix + path, httplib::Headers{},
                          [&](const char* data, size_t len) {
                            if (body.size() + len > kMaxReplyBytes) {
                              too_big = true;
                              return false;
                            }
                            body.append(data, len);
                            return true;
                          });
    if (too_big) {
      problem = path + ": the reply is larger than 16 MiB";
      return std::nullopt;
    }
    if (!res) {
      problem = cannot_reach(options_, res.error());
      return std::nullopt;
    }
    if (res->status != 200) {
      problem = options_.url + path + " answered HTTP " +
                std::to_string(res->status) +
                (res->status == 401 ? " (needs --auth-file)" : "");
      return std::nullopt;
    }
    return body;
  };

  if (auto body = get("/api/v1/status")) {
    try {
      RemoteStatus st = parse_remote_status(*body);
      interval_s_ =
          options_.interval_s > 0 ? options_.interval_s : st.interval_s;
      remote_kill_ = st.remote_kill;
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
