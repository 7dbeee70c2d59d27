#include "cli/fleet_plan.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "cli/prometheus_credentials.h"
#include "common/terminal_text.h"
#include "promsource/fleet_nodes.h"
#include "promsource/label_matcher.h"

namespace gd {
namespace {

// "90 s", "1.5 s": a deadline in a message.
std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

}  // namespace

FleetPlan plan_fleet(const FleetFlags& f) {
  const PrometheusFlags& prom = f.prom;
  const std::string& match = f.match;
  FleetPlan plan;
  plan.url = prometheus_url(prom);
  plan.who = prometheus_credentials(prom);
  check_node_label(prom);
  if (!match.empty()) {
    try {
      promsource::check_label_matcher(match);
    } catch (const std::invalid_argument& e) {
      throw CLI::ValidationError("--match", e.what());
    }
  }
  if (f.concurrency < 1 || f.concurrency > kMaxFleetConcurrency)
    throw CLI::ValidationError("--concurrency", "is 1 to 64");
  if (f.node_timeout_s > f.timeout_s)
    throw CLI::ValidationError("--node-timeout", "is longer than --timeout " +
                                                     seconds_text(f.timeout_s));
  plan.window = window_of(prom, f.window_s);
  std::signal(SIGPIPE, SIG_IGN);
  http::prom::Limits limits;
  // One series per GPU of the fleet when listing the nodes.
  limits.max_series = 65536;
  const http::prom::Client lister(plan.url, plan.who, limits);
  http::RequestCancel cancel;
  const TimeWindow& w = plan.window;
  plan.nodes = promsource::fleet_nodes(lister, w.start, w.end, cancel, match);
  if (plan.nodes.empty())
    throw std::runtime_error(
        prom.url + " has no GPU series (DCGM_FI_DEV_GPU_UTIL" + match +
        ") between " + utc_text(w.start) + " and " + utc_text(w.end));
  if (prom.node_label.empty())
    plan.aliases = promsource::node_aliases(lister, w.start, w.end, cancel);
  return plan;
}

promsource::NodeQuery node_query(const FleetPlan& plan, size_t i,
                                 const PrometheusFlags& prom) {
  promsource::NodeQuery q{
      plan.nodes[i],  plan.window.start, plan.window.end, prom.step_s, {},
      prom.node_label};
  if (auto a = plan.aliases.find(plan.nodes[i]); a != plan.aliases.end())
    q.instance_hosts = a->second;
  return q;
}

std::string NodeTurn::ran_out() const {
  std::lock_guard lock(mu_);
  return ran_out_;
}

// The nodes' deadlines kept by one watchdog thread: each node's turn is
// cancelled at its own deadline or the fleet's, whichever comes first.
class FleetDeadlines {
 public:
  using Clock = std::chrono::steady_clock;

  FleetDeadlines(double node_s, double total_s)
      : node_s_(node_s),
        total_s_(total_s),
        end_(Clock::now() + seconds(total_s)),
        watchdog_([this] { watch(); }) {}
  ~FleetDeadlines() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    watchdog_.join();
  }

  bool spent() const { return Clock::now() >= end_; }
  std::string fleet_ran_out() const {
    return "not read: the fleet's deadline (--timeout " +
           seconds_text(total_s_) + ") ran out first";
  }

  void start(NodeTurn& turn) {
    std::lock_guard lock(mu_);
    const auto own = Clock::now() + seconds(node_s_);
    turns_.push_back({&turn, std::min(own, end_), own <= end_});
    wake_.notify_all();
  }
  void end(NodeTurn& turn) {
    std::lock_guard lock(mu_);
    std::erase_if(turns_, [&](const Entry& e) { return e.turn == &turn; });
  }

 private:
  struct Entry {
    NodeTurn* turn;
    Clock::time_point at;
    bool own;  // the node's deadline, not the fleet's
  };
  static Clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(s));
  }
  void watch() {
    std::unique_lock lock(mu_);
    while (!stop_) {
      auto next = Clock::time_point::max();
      const auto now = Clock::now();
      for (auto it = turns_.begin(); it != turns_.end();) {
        if (it->at > now) {
          next = std::min(next, it->at);
          ++it;
          continue;
        }
        {
          std::lock_guard turn_lock(it->turn->mu_);
          it->turn->ran_out_ =
              it->own ? "ran out of its deadline (--node-timeout " +
                            seconds_text(node_s_) + ") before it was read"
                      : "ran out of the fleet's deadline (--timeout " +
                            seconds_text(total_s_) + ") before it was read";
        }
        it->turn->cancel_.cancel();
        it = turns_.erase(it);
      }
      if (next == Clock::time_point::max())
        wake_.wait(lock);
      else
        wake_.wait_until(lock, next);
    }
  }

  const double node_s_, total_s_;
  const Clock::time_point end_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::vector<Entry> turns_;
  bool stop_ = false;
  std::thread watchdog_;
};

void for_each_node(
    const FleetPlan& plan, const FleetFlags& f, promsource::ReadChoice& read,
    const char* command,
    const std::function<void(size_t, const http::prom::Client&, NodeTurn&)>& fn,
    const std::function<void(size_t, const std::string&)>& skipped) {
  FleetDeadlines deadlines(f.node_timeout_s, f.timeout_s);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    const http::prom::Client client(plan.url, plan.who);
    for (size_t i = next++; i < plan.nodes.size(); i = next++) {
      if (deadlines.spent()) {
        skipped(i, deadlines.fleet_ran_out());
        continue;
      }
      NodeTurn turn;
      deadlines.start(turn);
      fn(i, client, turn);
      deadlines.end(turn);
    }
  };
  const size_t workers =
      std::min(plan.nodes.size(), static_cast<size_t>(f.concurrency));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < workers; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  if (auto why = read.fallback(); !why.empty())
    std::fprintf(stderr,
                 "gpudoctor: %s: remote read not answered (%s); GPU series "
                 "were read by query_range\n",
                 command, terminal_safe(why, 300).c_str());
}

}  // namespace gd
