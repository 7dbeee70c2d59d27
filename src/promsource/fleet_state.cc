#include "promsource/fleet_state.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>

#include "promsource/node_match.h"
#include "promsource/node_window.h"
#include "promsource/series_table.h"

namespace gd::promsource {
namespace {

using http::prom::Series;

// The evaluation step of a one-point range query (any positive value).
constexpr double kStepS = 60;

// The labels a node's window reads of a GPU series (node_window.cc): the
// answer keeps only these, by node and GPU, whatever else a site's
// relabelling adds (job, pod, namespace, ...), and no metric name.
constexpr const char* kKeptLabels =
    "Hostname, instance, gpu, GPU_I_ID, UUID, modelName, pci_bus_id, "
    "DCGM_FI_DRIVER_VERSION";

std::string fleet_tagged(const std::string& expr, size_t entry) {
  return "label_replace(max by (" + std::string(kKeptLabels) + ") (" + expr +
         "), \"" + kEntryLabel + "\", \"" + std::to_string(entry) +
         "\", \"\", \"\")";
}

bool in_round(const Entry& e) {
  return e.scope == Scope::kGpu &&
         (e.kind == Kind::kSample || e.kind == Kind::kFact ||
          e.kind == Kind::kFbFree);
}

// The node a series names, "" when it names none that can be one.
std::string node_name(const Series& s) {
  std::string node = node_of(s.label("Hostname"), s.label("instance"));
  try {
    check_node_name(node);
  } catch (const std::invalid_argument&) {
    return {};
  }
  return node;
}

bool is_instance_host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
}

bool is_instance_v6_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
         (c >= 'A' && c <= 'F') || c == ':' || c == '.';
}

}  // namespace

std::string serve_instance_of(const std::string& instance) {
  if (instance.empty() || instance.size() > kMaxServeInstanceChars) return {};
  const size_t colon = instance.rfind(':');
  if (colon == std::string::npos || colon == 0) return {};
  const std::string host = instance.substr(0, colon);
  const std::string port = instance.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port[0] == '0') return {};
  for (char c : port)
    if (c < '0' || c > '9') return {};
  if (std::stoi(port) > 65535) return {};
  if (host.front() == '[') {
    if (host.size() < 4 || host.back() != ']') return {};
    for (size_t i = 1; i + 1 < host.size(); ++i)
      if (!is_instance_v6_char(host[i])) return {};
    return instance;
  }
  for (char c : host)
    if (!is_instance_host_char(c)) return {};
  return instance;
}

http::prom::Limits fleet_limits(double deadline_s) {
  http::prom::Limits l;
  // A series per GPU: kMaxFleetNodes nodes of 8 GPUs, for each entry of a
  // batch; every reply is still at most max_body_bytes.
  l.max_series = kMaxFleetNodes * 8 * kFleetBatchEntries;
  l.max_points = l.max_series;
  l.tries = 1;  // the next round is the next try
  l.request_s = deadline_s;
  l.total_s = deadline_s;
  return l;
}

std::vector<QueryBatch> fleet_batches(const std::string& match) {
  std::vector<QueryBatch> out;
  // serve's scrape address: its build_info, one series per serve.
  const std::string serves =
      "label_replace(count by (Hostname, instance) "
      "(gpudoctor_build_info" +
      match + "), \"" + kEntryLabel + "\", \"" +
      std::to_string(kServeInstanceEntry) + "\", \"\", \"\")";
  out.push_back({{kLastSeenEntry, kServeInstanceEntry},
                 fleet_tagged("timestamp(DCGM_FI_DEV_GPU_UTIL" + match + ")",
                              kLastSeenEntry) +
                     " or " + serves});
  const auto all = entries();
  QueryBatch batch;
  for (size_t i = 0; i < all.size(); ++i) {
    if (!in_round(all[i])) continue;
    std::string q = fleet_tagged(std::string(all[i].query) + match, i);
    if (!batch.entries.empty() &&
        (batch.entries.size() == kFleetBatchEntries ||
         batch.query.size() + q.size() + 4 > kMaxBatchQueryBytes)) {
      out.push_back(std::move(batch));
      batch = {};
    }
    batch.query += (batch.query.empty() ? "" : " or ") + q;
    batch.entries.push_back(i);
  }
  if (!batch.entries.empty()) out.push_back(std::move(batch));
  return out;
}

FleetBuilder::FleetBuilder(double t) : FleetBuilder(t, t, kStepS) {}

FleetBuilder::FleetBuilder(double start, double end, double step_s)
    : start_(start), step_(step_s) {
  st_.t = end;
}

FleetBuilder::~FleetBuilder() = default;

void FleetBuilder::add(const QueryBatch& batch, std::vector<Series>&& answer) {
  QueryBatch tagged_batch = batch;
  // A batch of one entry is tagged too: split it by its tag all the same.
  if (tagged_batch.entries.size() == 1)
    tagged_batch.entries.push_back(SIZE_MAX);
  auto split = split_batch(tagged_batch, std::move(answer));
  for (size_t i = 0; i < batch.entries.size(); ++i) {
    if (batch.entries[i] == kLastSeenEntry)
      add_nodes(split[i]);
    else if (batch.entries[i] == kServeInstanceEntry)
      add_serve_instances(split[i]);
    else
      add_entry(batch.entries[i], std::move(split[i]));
    split[i] = {};  // each entry's series gone once filed
  }
}

// The nodes: those with a sample time, the first kMaxFleetNodes by name.
void FleetBuilder::add_nodes(const std::vector<Series>& series) {
  if (!st_.nodes.empty()) return;  // asked once a round
  std::map<std::string, double> seen;
  // By node: grid step -> newest scrape time of any of its GPUs there.
  std::map<std::string, std::map<long, double>> scrapes;
  for (const Series& s : series) {
    if (!s.label("GPU_I_ID").empty() || s.points.empty()) continue;
    std::string node = node_name(s);
    if (node.empty()) {
      ++st_.series_unnamed;
      continue;
    }
    for (const auto& p : s.points) {
      if (!std::isfinite(p.v)) continue;
      auto [it, fresh] = seen.try_emplace(node, p.v);
      if (!fresh) it->second = std::max(it->second, p.v);
      auto [at, first] = scrapes[node].try_emplace(grid_step(p.t), p.v);
      if (!first) at->second = std::max(at->second, p.v);
    }
  }
  while (seen.size() > kMaxFleetNodes) {
    seen.erase(std::prev(seen.end()));
    ++st_.nodes_left_out;
  }
  for (const auto& [node, last_seen] : seen) {
    FleetNode& n = st_.nodes.emplace_back();
    n.node = node;
    n.last_seen = last_seen;
    n.sample.t = st_.t;
    index_.emplace(node, st_.nodes.size() - 1);
    scrapes_.push_back(std::move(scrapes[node]));
    windows_.push_back(
        std::make_unique<NodeWindow>(node, start_, st_.t, step_));
  }
}

// Each listed node's serve address, after the nodes (its batch lists them
// first); of two, the first in order, so a round is the same every time.
void FleetBuilder::add_serve_instances(const std::vector<Series>& series) {
  for (const Series& s : series) {
    auto it = index_.find(node_name(s));
    if (it == index_.end()) continue;
    std::string instance = serve_instance_of(s.label("instance"));
    std::string& kept = st_.nodes[it->second].serve_instance;
    if (!instance.empty() && (kept.empty() || instance < kept))
      kept = std::move(instance);
  }
}

// One entry's series, each to its node's window (batches come in the
// table's order, so the first source of a field wins as in a window).
void FleetBuilder::add_entry(size_t entry, std::vector<Series>&& series) {
  const auto all = entries();
  if (entry >= all.size()) return;
  std::map<size_t, std::vector<Series>> by_node;
  for (Series& s : series) {
    auto it = index_.find(node_name(s));
    if (it == index_.end() || !windows_[it->second]) continue;
    by_node[it->second].push_back(std::move(s));
  }
  for (auto& [i, mine] : by_node) {
    try {
      windows_[i]->add(all[entry], mine);
    } catch (const std::exception& e) {
      st_.nodes[i].error = e.what();
      windows_[i].reset();  // refused: no values
    }
  }
}

FleetState FleetBuilder::finish() {
  for (size_t i = 0; i < st_.nodes.size(); ++i) {
    FleetNode& n = st_.nodes[i];
    if (!windows_[i]) {
      n.header.host.hostname = n.node;
      continue;
    }
    n.header = windows_[i]->header();
    windows_[i]->each_sample([&](const Sample& s) { n.sample = s; });
    n.sample.t = st_.t;
    windows_[i].reset();
  }
  return std::move(st_);
}

long FleetBuilder::grid_step(double t) const {
  return std::lround((t - start_) / step_);
}

std::vector<NodeHistory> FleetBuilder::finish_history() {
  std::vector<NodeHistory> out;
  for (size_t i = 0; i < st_.nodes.size(); ++i) {
    if (!windows_[i]) continue;  // refused: no values
    NodeHistory& h = out.emplace_back();
    h.node = st_.nodes[i].node;
    h.header = windows_[i]->header();
    const auto& scrapes = scrapes_[i];
    windows_[i]->each_sample([&](const Sample& s) {
      auto at = scrapes.find(grid_step(s.t));
      if (at == scrapes.end() || s.gpus.empty()) return;
      // A scrape found again at the next grid step is one sample.
      if (!h.samples.empty() && at->second <= h.samples.back().t) return;
      h.samples.push_back(s);
      h.samples.back().t = at->second;
    });
    windows_[i].reset();
  }
  return out;
}

FleetState fleet_state(double t, const std::vector<QueryBatch>& batches,
                       std::vector<std::vector<Series>>&& answers) {
  FleetBuilder b(t);
  for (size_t i = 0; i < batches.size() && i < answers.size(); ++i)
    b.add(batches[i], std::move(answers[i]));
  return b.finish();
}

std::string ask_batches(const http::prom::Client& client,
                        const std::vector<QueryBatch>& batches, double from,
                        double to, double step_s,
                        std::chrono::steady_clock::time_point deadline,
                        const std::string& late, http::RequestCancel& cancel,
                        FleetBuilder& built) {
  for (const auto& b : batches) {
    const double left = std::chrono::duration<double>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
    if (left < 0.01) return late;
    auto r = client.with_deadline(left).query_range(b.query, from, to, step_s,
                                                    cancel);
    if (!r.ok) return std::move(r.error);
    built.add(b, std::move(r.series));
  }
  return {};
}

FleetState read_fleet(const http::prom::Client& client,
                      const std::vector<QueryBatch>& batches, double t,
                      double deadline_s, http::RequestCancel& cancel) {
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(deadline_s));
  FleetBuilder built(t);
  std::string error =
      ask_batches(client, batches, t, t, kStepS, deadline,
                  "the round ran out of its deadline (" +
                      std::to_string(static_cast<int>(deadline_s)) + " s)",
                  cancel, built);
  if (!error.empty()) {
    FleetState st;
    st.t = t;
    st.error = std::move(error);
    return st;
  }
  return built.finish();
}

std::string recent_nodes_query(const std::string& match) {
  return "max by (Hostname, instance) (max_over_time(timestamp("
         "DCGM_FI_DEV_GPU_UTIL" +
         match + ")[" + std::to_string(static_cast<int>(kRecentWindowS)) +
         "s:60s]))";
}

std::map<std::string, double> recent_nodes(const std::vector<Series>& answer) {
  std::map<std::string, double> out;
  for (const Series& s : answer) {
    if (s.points.empty() || !std::isfinite(s.points.back().v)) continue;
    std::string node = node_name(s);
    if (node.empty()) continue;
    auto [it, fresh] = out.try_emplace(std::move(node), s.points.back().v);
    if (!fresh) it->second = std::max(it->second, s.points.back().v);
  }
  while (out.size() > kMaxFleetNodes) out.erase(std::prev(out.end()));
  return out;
}

std::map<std::string, double> read_recent_nodes(
    const http::prom::Client& client, const std::string& match, double t,
    double deadline_s, http::RequestCancel& cancel, std::string& error) {
  auto r = client.with_deadline(deadline_s)
               .query_range(recent_nodes_query(match), t, t, kStepS, cancel);
  if (!r.ok) {
    error = r.error;
    return {};
  }
  return recent_nodes(r.series);
}

}  // namespace gd::promsource
