#include "monitor/fleet_feed.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "common/signal_stack.h"
#include "monitor/fleet_processes.h"
#include "promsource/fleet_history.h"

namespace gd::monitor {
namespace {

using Clock = std::chrono::steady_clock;

double wall_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

check::Result judge_node(const promsource::FleetNode& n) {
  check::Input in;
  in.header = &n.header;
  in.sample = &n.sample;
  in.node_only = true;  // a node's health: no job's GPUs
  return check::judge(in);
}

}  // namespace

std::vector<FleetNodeState> merge_round(const std::vector<FleetNodeState>& prev,
                                        promsource::FleetState&& round) {
  std::vector<FleetNodeState> out;
  out.reserve(round.nodes.size());
  std::map<std::string, size_t> listed;
  for (auto& n : round.nodes) {
    FleetNodeState& s = out.emplace_back();
    s.judged = judge_node(n);
    s.data = std::move(n);
    s.listed = true;
    s.listed_at = round.t;
    listed.emplace(s.data.node, out.size() - 1);
  }
  std::vector<const FleetNodeState*> gone;
  for (const auto& p : prev)
    if (!listed.count(p.data.node)) gone.push_back(&p);
  // The most recently listed are kept.
  std::stable_sort(gone.begin(), gone.end(), [](auto* a, auto* b) {
    return a->data.last_seen > b->data.last_seen;
  });
  if (gone.size() > kMaxGoneNodes) gone.resize(kMaxGoneNodes);
  for (const auto* p : gone) {
    out.push_back(*p);
    out.back().listed = false;
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.data.node < b.data.node;
  });
  return out;
}

std::vector<FleetNodeState> add_recent(
    std::vector<FleetNodeState> nodes,
    const std::map<std::string, double>& recent) {
  size_t gone = 0;
  std::set<std::string> held;
  for (const auto& n : nodes) {
    held.insert(n.data.node);
    gone += !n.listed;
  }
  // The most recently seen first.
  std::vector<std::pair<double, std::string>> add;
  for (const auto& [node, at] : recent)
    if (!held.count(node)) add.emplace_back(at, node);
  std::sort(add.rbegin(), add.rend());
  for (const auto& [at, node] : add) {
    if (gone == kMaxGoneNodes) break;
    FleetNodeState& s = nodes.emplace_back();
    s.data.node = node;
    s.data.last_seen = at;
    s.data.header.host.hostname = node;
    s.data.sample.t = at;
    s.listed = false;
    ++gone;
  }
  std::sort(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) {
    return a.data.node < b.data.node;
  });
  return nodes;
}

FleetFeed::FleetFeed(http::prom::Client client, FleetFeedOptions options)
    : FleetFeedCore(options.source, options.interval_s),
      client_(std::move(client)),
      options_(std::move(options)),
      batches_(promsource::fleet_batches(options_.match)) {}

FleetFeed::~FleetFeed() { stop(); }

void FleetFeed::start() {
  thread_ = std::thread([this] { run(); });
}

void FleetFeed::stop() {
  ask_to_stop();
  cancel_.cancel();
  if (thread_.joinable()) thread_.join();
}

void FleetFeed::run() {
  SignalStack signal_stack;  // for top's crash handler (terminal.h)
  auto next = Clock::now();
  bool first = true, due = true;
  for (;;) {
    if (due) {
      round();
      if (first) {
        first = false;
        add_recent_nodes();
        // Judged again at once with each node's last minutes.
        if (fill_windows()) round();
      }
      next += std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(options_.interval_s));
      if (next < Clock::now()) next = Clock::now();
    }
    read_open_processes();
    if (!wait_for_next(next, due)) return;
  }
}

void FleetFeed::read_open_processes() {
  const std::optional<std::string> open = open_node();
  if (!open) {
    if (processes_.node.empty()) return;
    processes_ = {};
  } else if (cancel_.cancelled()) {
    return;
  } else {
    FleetProcesses p;
    p.node = *open;
    p.asked = true;
    try {
      const std::string q = fleet_process_query(*open);
      const double t = std::floor(wall_now() * 1000) / 1000;
      // One node's series: a short deadline of its own, within the round's.
      auto r = client_.with_deadline(std::min(10.0, options_.round_deadline_s))
                   .query_range(q, t, t, 60, cancel_);
      if (cancel_.cancelled()) return;
      if (r.ok)
        p = fleet_processes_from_series(*open, r.series);
      else
        p.note = "processes: cannot read them: " + r.error;
    } catch (const std::invalid_argument& e) {
      p.note = std::string("processes: ") + e.what();
    }
    processes_ = std::move(p);
  }
  auto f = std::make_shared<FleetFrame>(*latest());
  f->processes = processes_;
  publish(std::move(f));
}

void FleetFeed::add_recent_nodes() {
  auto prev = latest();
  if (cancel_.cancelled() || !prev->error.empty() || prev->t == 0) return;
  std::string error;
  auto recent =
      promsource::read_recent_nodes(client_, options_.match, prev->t,
                                    options_.round_deadline_s, cancel_, error);
  // Without it, only the nodes this top saw stop answering are listed so.
  if (!error.empty() || cancel_.cancelled()) return;
  auto f = std::make_shared<FleetFrame>(*prev);
  f->nodes = add_recent(std::move(f->nodes), recent);
  publish(std::move(f));
}

bool FleetFeed::fill_windows() {
  auto prev = latest();
  if (cancel_.cancelled() || !prev->error.empty() || prev->t == 0) {
    window_note_ =
        "each node's window holds its scrapes since the view started";
    return false;
  }
  // Twice a round's deadline: the history is a few rounds' worth of points.
  windows_.begin_fill();
  const std::string error = promsource::read_fleet_history(
      client_, batches_, prev->t, kFleetWindowS, promsource::kFleetHistoryStepS,
      2 * options_.round_deadline_s, cancel_,
      [&](std::vector<promsource::NodeHistory>&& slice) {
        windows_.fill(std::move(slice));
      });
  if (cancel_.cancelled()) return false;
  if (!error.empty()) {
    window_note_ = "the last 10 minutes could not be read whole (" + error +
                   "): each node's window holds the scrapes since the view "
                   "started, and what was read before it failed";
    return true;  // the next round, at once, judges what was read and says so
  }
  window_note_.clear();
  return true;
}

void FleetFeed::round() {
  const auto t0 = Clock::now();
  // On the millisecond: the answers' times are the round's.
  const double t = std::floor(wall_now() * 1000) / 1000;
  promsource::FleetState st = promsource::read_fleet(
      client_, batches_, t, options_.round_deadline_s, cancel_);
  if (cancel_.cancelled()) return;
  auto prev = latest();
  auto f = std::make_shared<FleetFrame>();
  f->source = options_.source;
  f->interval_s = options_.interval_s;
  if (!st.error.empty()) {
    // The last nodes stay, as they were: the screen ages them.
    f->error = st.error;
    f->t = prev->t;
    f->nodes = prev->nodes;
    f->nodes_left_out = prev->nodes_left_out;
    f->series_unnamed = prev->series_unnamed;
  } else {
    f->t = st.t;
    f->nodes_left_out = st.nodes_left_out;
    f->series_unnamed = st.series_unnamed;
    f->nodes = merge_round(prev->nodes, std::move(st));
    windows_.judge(f->nodes);
  }
  // The requests, the answers' parsing and every node's judging.
  f->round_s = std::chrono::duration<double>(Clock::now() - t0).count();
  f->processes = processes_;  // until read_open_processes asks again
  f->window_note = window_note_;
  publish(std::move(f));
}

}  // namespace gd::monitor
