#include "cli/fleet_plan.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "cli/prometheus_credentials.h"
#include "common/terminal_text.h"
#include "promsource/fleet_nodes.h"
#include "promsource/label_matcher.h"

namespace gd {

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

void for_each_node(
    const FleetPlan& plan, int concurrency, promsource::ReadChoice& read,
    const char* command,
    const std::function<void(size_t, const http::prom::Client&)>& fn) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    const http::prom::Client client(plan.url, plan.who);
    for (size_t i = next++; i < plan.nodes.size(); i = next++) fn(i, client);
  };
  const size_t workers =
      std::min(plan.nodes.size(), static_cast<size_t>(concurrency));
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
