#include "monitor/serve_fleet_feed.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <stdexcept>

#include "common/signal_stack.h"
#include "diagnose/engine.h"
#include "monitor/fleet_processes.h"
#include "monitor/remote_feed.h"
#include "monitor/remote_json.h"
#include "promsource/fleet_state.h"
#include "promsource/node_match.h"

namespace gd::monitor {
namespace {

using Clock = std::chrono::steady_clock;

double serve_fleet_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::string short_text(const std::string& s) {
  return s.size() > 200 ? s.substr(0, 200) + "..." : s;
}

// host:port[/prefix]: a node's name until its serve says its Hostname.
std::string url_label(const http::Url& u) {
  const bool v6 = u.host.find(':') != std::string::npos;
  return (v6 ? "[" + u.host + "]" : u.host) + ":" + std::to_string(u.port) +
         u.path;
}

void add_serve_url(std::vector<std::string>& out, std::set<std::string>& seen,
                   const std::string& url, const std::string& where) {
  try {
    parse_remote_url(url);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + e.what());
  }
  if (!seen.insert(url).second)
    throw std::invalid_argument(where + "'" + short_text(url) +
                                "' is listed twice");
  if (out.size() == promsource::kMaxFleetNodes)
    throw std::invalid_argument(where + "more than " +
                                std::to_string(promsource::kMaxFleetNodes) +
                                " serve URLs");
  out.push_back(url);
}

check::Result judged_by_serve(const FindingsState& fs) {
  check::Result r;
  r.node_only = true;
  std::vector<Finding> findings = fs.findings;
  sort_findings(findings);  // the most severe first, as check's
  for (auto& f : findings) {
    std::string brief = f.title;
    r.findings.push_back({std::move(f), std::move(brief), 0});
  }
  r.not_judged = fs.not_judged;
  return r;
}

}  // namespace

std::vector<std::string> parse_serve_list(const std::string& arg) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  size_t at = 0;
  for (;;) {
    const size_t comma = arg.find(',', at);
    const std::string url = arg.substr(at, comma - at);
    if (url.empty())
      throw std::invalid_argument("an empty URL in the list (two commas?)");
    add_serve_url(out, seen, url, "");
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

std::vector<std::string> read_serve_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot read it");
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::string line;
  size_t number = 0, bytes = 0;
  // getline bounded: a line past kMaxServeListLine is refused, not held.
  for (;;) {
    line.clear();
    char c = 0;
    bool any = false;
    while (in.get(c)) {
      any = true;
      if (++bytes > kMaxServeListBytes)
        throw std::invalid_argument(path + ": more than " +
                                    std::to_string(kMaxServeListBytes >> 20) +
                                    " MiB");
      if (c == '\n') break;
      if (line.size() == kMaxServeListLine)
        throw std::invalid_argument(
            path + ":" + std::to_string(number + 1) + ": longer than " +
            std::to_string(kMaxServeListLine) + " characters");
      line.push_back(c);
    }
    if (!any) break;
    ++number;
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const auto last = line.find_last_not_of(" \t\r");
    add_serve_url(out, seen, line.substr(first, last - first + 1),
                  path + ":" + std::to_string(number) + ": ");
  }
  if (out.empty()) throw std::invalid_argument(path + ": no serve URL in it");
  return out;
}

std::vector<FleetNodeState> serve_round_nodes(
    const std::vector<ServeNodeSlot>& slots) {
  std::vector<FleetNodeState> out;
  out.reserve(slots.size());
  std::set<std::string> names;
  for (const auto& s : slots) {
    FleetNodeState& n = out.emplace_back();
    std::string name = s.label;
    if (s.last && !s.last->header.host.hostname.empty())
      name = s.last->header.host.hostname.substr(0, promsource::kMaxNodeChars);
    if (!names.insert(name).second) {
      name += " (" + s.label + ")";
      names.insert(name);
    }
    n.data.node = std::move(name);
    n.listed = s.answered && s.last.has_value();
    if (!n.listed)
      n.problem = s.problem.empty() ? "no answer within the round" : s.problem;
    if (!s.last) {
      n.data.error = n.problem;  // never answered: why, and no values
      n.data.header.host.hostname = s.label;
      continue;
    }
    n.data.header = s.last->header;
    if (s.last->sample) n.data.sample = *s.last->sample;
    // Its age is since its serve last answered (this clock: a serve's own
    // may be off).
    n.data.last_seen = s.last->at;
    n.listed_at = s.last->at;
    n.judged = judged_by_serve(s.last->findings);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.data.node < b.data.node;
  });
  return out;
}

ServeFleetFeed::ServeFleetFeed(ServeFleetOptions options)
    : FleetFeedCore(options.source, options.interval_s),
      options_(std::move(options)),
      // Enough for a slow node's pair of requests, never past the interval.
      round_deadline_s_(std::clamp(2 * options_.request_timeout_s + 0.25, 0.5,
                                   std::max(0.5, options_.interval_s))) {
  for (const auto& u : options_.urls) {
    urls_.push_back(parse_remote_url(u));
    ServeNodeSlot& s = slots_.emplace_back();
    s.url = u;
    s.label = url_label(urls_.back());
  }
  busy_.assign(slots_.size(), 0);
  ok_round_.assign(slots_.size(), 0);
  failed_.assign(slots_.size(), 0);
  auto f = std::make_shared<FleetFrame>();
  f->source = options_.source;
  f->interval_s = options_.interval_s;
  f->findings_of = "serve's own live diagnosis";
  publish(std::move(f));
}

ServeFleetFeed::~ServeFleetFeed() { stop(); }

void ServeFleetFeed::start() {
  const size_t n = std::clamp<size_t>(options_.max_in_flight, 1,
                                      std::max<size_t>(1, slots_.size()));
  for (size_t i = 0; i < n; ++i)
    cancels_.push_back(std::make_unique<http::RequestCancel>());
  for (size_t i = 0; i < n; ++i) workers_.emplace_back([this, i] { work(i); });
  thread_ = std::thread([this] { run(); });
}

void ServeFleetFeed::stop() {
  ask_to_stop();
  {
    std::lock_guard lock(pool_mu_);
    pool_stopping_ = true;
  }
  for (auto& c : cancels_) c->cancel();  // every request in flight ends now
  work_cv_.notify_all();
  done_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& w : workers_)
    if (w.joinable()) w.join();
  workers_.clear();
}

uint64_t ServeFleetFeed::requests_sent() const {
  std::lock_guard lock(pool_mu_);
  return sent_;
}

void ServeFleetFeed::publish_with_processes(std::shared_ptr<FleetFrame> f) {
  const std::optional<std::string> open = open_node();
  f->processes = {};
  if (open)
    for (const auto& n : f->nodes)
      if (n.data.node == *open && n.data.error.empty()) {
        // In serve's status reply already: its sample's processes.
        f->processes = fleet_processes_of(n.data.node, n.data.sample);
        break;
      }
  publish(std::move(f));
}

void ServeFleetFeed::run() {
  SignalStack signal_stack;  // for top's crash handler (terminal.h)
  auto next = Clock::now();
  bool due = true;
  for (;;) {
    if (due) {
      round();
      next += std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(options_.interval_s));
      if (next < Clock::now()) next = Clock::now();
    } else {
      // The node view opened or closed: the newest values, with its
      // processes.
      publish_with_processes(std::make_shared<FleetFrame>(*latest()));
    }
    if (!wait_for_next(next, due)) return;
  }
}

void ServeFleetFeed::round() {
  const auto t0 = Clock::now();
  const auto deadline =
      t0 + std::chrono::duration_cast<Clock::duration>(
               std::chrono::duration<double>(round_deadline_s_));
  std::vector<ServeNodeSlot> slots;
  uint64_t round_no = 0;
  {
    std::unique_lock lock(pool_mu_);
    round_no = ++round_no_;
    // A node still queued or in flight from an earlier round is not asked
    // twice: a hung serve holds one worker at most.
    for (size_t i = 0; i < slots_.size(); ++i)
      if (!busy_[i]) {
        busy_[i] = 1;
        queue_.push_back(i);
      }
    work_cv_.notify_all();
    done_cv_.wait_until(lock, deadline, [&] {
      if (pool_stopping_) return true;
      return std::none_of(busy_.begin(), busy_.end(),
                          [](char b) { return b != 0; });
    });
    if (pool_stopping_) return;
    slots = slots_;
    // Answered: its newest pair did not fail, and came this round or the
    // last (a pair still in flight from the last round counts once).
    for (size_t i = 0; i < slots.size(); ++i)
      slots[i].answered =
          !failed_[i] && ok_round_[i] != 0 && ok_round_[i] + 1 >= round_no;
  }
  auto f = std::make_shared<FleetFrame>();
  f->source = options_.source;
  f->interval_s = options_.interval_s;
  f->findings_of = "serve's own live diagnosis";
  f->t = serve_fleet_now();
  f->nodes = serve_round_nodes(slots);
  f->round_s = std::chrono::duration<double>(Clock::now() - t0).count();
  publish_with_processes(std::move(f));
}

void ServeFleetFeed::work(size_t worker) {
  SignalStack signal_stack;
  http::RequestCancel& cancel = *cancels_[worker];
  for (;;) {
    size_t i = 0;
    {
      std::unique_lock lock(pool_mu_);
      work_cv_.wait(lock, [&] { return pool_stopping_ || !queue_.empty(); });
      if (pool_stopping_) return;
      i = queue_.front();
      queue_.pop_front();
      ++sent_;
    }
    Outcome o = poll(i, cancel);
    std::lock_guard lock(pool_mu_);
    if (pool_stopping_) return;
    busy_[i] = 0;
    if (o.reply) {
      slots_[i].last = std::move(o.reply);
      slots_[i].problem.clear();
      ok_round_[i] = round_no_;
      failed_[i] = 0;
    } else {
      slots_[i].problem = std::move(o.problem);
      failed_[i] = 1;
    }
    done_cv_.notify_all();
  }
}

ServeFleetFeed::Outcome ServeFleetFeed::poll(
    size_t node, http::RequestCancel& cancel) const {
  const http::Url& url = urls_[node];
  const std::string& text = options_.urls[node];
  Outcome o;
  auto get = [&](const std::string& path) -> std::optional<std::string> {
    http::Request req;
    req.path = path;
    req.total_s = options_.request_timeout_s;
    http::Reply r = http::send(url, options_.who, req, cancel);
    if (!r.ok) {
      o.problem = r.error;
      return std::nullopt;
    }
    if (r.status != 200) {
      o.problem = text + path + " answered HTTP " + std::to_string(r.status) +
                  (r.status == 401 ? " (needs --auth-file)" : "");
      return std::nullopt;
    }
    return std::move(r.body);
  };
  ServeReply reply;
  auto status = get("/api/v1/status");
  if (!status) return o;
  try {
    RemoteStatus st = parse_remote_status(*status);
    reply.header = std::move(st.header);
    reply.sample = std::move(st.sample);
  } catch (const std::exception& e) {
    o.problem = text + "/api/v1/status: " + e.what();
    return o;
  }
  auto findings = get("/api/v1/findings");
  if (!findings) return o;
  try {
    reply.findings = parse_remote_findings(*findings);
  } catch (const std::exception& e) {
    o.problem = text + "/api/v1/findings: " + e.what();
    return o;
  }
  reply.at = serve_fleet_now();
  o.reply = std::move(reply);
  return o;
}

}  // namespace gd::monitor
