#include "monitor/remote_feed.h"

#include <httplib.h>

#include <chrono>
#include <functional>
#include <stdexcept>

#include "common/signal_stack.h"
#include "monitor/remote_http.h"
#include "monitor/remote_json.h"

namespace gd::monitor {
namespace {

using Clock = std::chrono::steady_clock;

// A reply larger than this is not serve's (its status is ~60 KB with 512
// processes).
constexpr size_t kMaxReplyBytes = 16 << 20;

}  // namespace

namespace {

// "host[:port]" or "[v6]:port" into url.host and url.port.
void split_authority(
    const std::string& authority, RemoteUrl& url,
    const std::function<std::invalid_argument(const std::string&)>& bad) {
  std::string port;
  bool has_port = false;
  if (authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string::npos) throw bad("no ']' after the IPv6 address");
    url.host = authority.substr(1, close - 1);
    std::string rest = authority.substr(close + 1);
    if (!rest.empty() && rest.front() != ':')
      throw bad("only :PORT may follow ']'");
    has_port = !rest.empty();
    if (has_port) port = rest.substr(1);
  } else {
    auto colon = authority.find(':');
    if (colon != authority.rfind(':'))
      throw bad("put an IPv6 address in brackets: http://[::1]:9856");
    url.host = authority.substr(0, colon);
    has_port = colon != std::string::npos;
    if (has_port) port = authority.substr(colon + 1);
  }
  if (url.host.empty()) throw bad("no host");
  url.port = url.https ? 443 : 80;
  if (!has_port) return;
  bool digits = !port.empty() && port.size() <= 5;
  for (char c : port) digits = digits && c >= '0' && c <= '9';
  int value = digits ? std::stoi(port) : 0;
  if (value < 1 || value > 65535)
    throw bad("port '" + port + "' is not a number in 1..65535");
  url.port = value;
}

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
  RemoteUrl out;
  out.scheme_host_port = scheme + authority;
  out.prefix = prefix;
  out.https = scheme == "https://";
  split_authority(authority, out, bad);
  return out;
}

RemoteFeed::RemoteFeed(RemoteOptions options)
    : options_(std::move(options)),
      url_(parse_remote_url(options_.url)),
      interval_s_(options_.interval_s > 0 ? options_.interval_s : 1),
      cancel_(std::make_unique<RequestCancel>()) {
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
  cancel_->cancel();  // the request in flight ends now
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
    std::string body;
    bool too_big = false;
    httplib::Request req;
    req.method = "GET";
    req.path = url_.prefix + path;
    req.content_receiver = [&](const char* data, size_t len, uint64_t,
                               uint64_t) {
      if (body.size() + len > kMaxReplyBytes) {
        too_big = true;
        return false;
      }
      body.append(data, len);
      return true;
    };
    httplib::Response res;
    BoundedReply r = send_bounded(options_, url_, options_.request_timeout_s,
                                  *cancel_, req, res);
    if (too_big) {
      problem = path + ": the reply is larger than 16 MiB";
      return std::nullopt;
    }
    if (!r.ok) {
      problem = r.error;
      return std::nullopt;
    }
    if (res.status != 200) {
      problem = options_.url + path + " answered HTTP " +
                std::to_string(res.status) +
                (res.status == 401 ? " (needs --auth-file)" : "");
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

  if (cancel_->cancelled()) return;  // stopping: "stopped" is no news
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
