#include "promsource/read_node.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "promsource/node_match.h"
#include "promsource/query_batches.h"

namespace gd::promsource {
namespace {

void replace_all(std::string& text, const std::string& from,
                 const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

}  // namespace

std::string rate_window(double step_s) {
  const double s = std::ceil(std::max(60.0, 4 * step_s));
  return "[" + std::to_string(static_cast<long long>(s)) + "s]";
}

std::string query_of(const Entry& e, const NodeSelector& node, double step_s) {
  if (e.scope != Scope::kHost) return gpu_query(e.query, node);
  std::string q = e.query;
  for (size_t at = q.find("$S("); at != std::string::npos;
       at = q.find("$S(", at)) {
    const size_t close = q.find(')', at);
    if (close == std::string::npos)
      throw std::logic_error("unclosed $S( in " + std::string(e.query));
    const std::string metric = q.substr(at + 3, close - at - 3);
    const std::string series = "(" + gpu_query(metric, node) + ")";
    q.replace(at, close + 1 - at, series);
    at += series.size();
  }
  replace_all(q, "$I", host_matcher(node));
  replace_all(q, "$W", rate_window(step_s));
  return q;
}

bool ReadChoice::remote() const {
  if (path_ == ReadPath::kQueryRange) return false;
  std::lock_guard lock(mu_);
  return path_ == ReadPath::kRemoteRead || refused_.empty();
}

void ReadChoice::refused(const std::string& why) {
  std::lock_guard lock(mu_);
  if (refused_.empty()) refused_ = why;
}

std::string ReadChoice::fallback() const {
  std::lock_guard lock(mu_);
  return refused_;
}

namespace {

// The GPU entries' series of the node by remote read, into `window` in the
// table's order (the first source of a field wins). False when the server
// refused remote read and `read` lets query_range answer instead.
bool read_gpu_series(const http::prom::Client& client, const NodeQuery& q,
                     const NodeSelector& node, ReadChoice& read,
                     NodeWindow& window, http::RequestCancel& cancel) {
  std::vector<std::string> metrics;
  for (const Entry& e : entries())
    if (e.scope != Scope::kHost) metrics.emplace_back(e.query);
  auto r = client.read_grid(gpu_selectors(metrics, node), q.start, q.end,
                            q.step_s, cancel);
  if (!r.ok && r.unsupported && read.path() == ReadPath::kAuto) {
    read.refused(r.error);
    return false;
  }
  if (!r.ok)
    throw std::runtime_error("reading the GPU series by remote read: " +
                             r.error);
  std::map<std::string, std::vector<http::prom::Series>> by_name;
  for (auto& s : r.series) {
    const std::string name = s.label("__name__");
    by_name[name].push_back(std::move(s));
  }
  static const std::vector<http::prom::Series> kNone;
  for (const Entry& e : entries()) {
    if (e.scope == Scope::kHost) continue;
    auto it = by_name.find(e.query);
    window.add(e, it == by_name.end() ? kNone : it->second);
  }
  return true;
}

}  // namespace

NodeWindow read_node(const http::prom::Client& client, const NodeQuery& q,
                     ReadChoice& read, http::RequestCancel& cancel) {
  const NodeSelector node{q.node, q.instance_hosts, q.node_label};
  check_node_name(q.node);
  if (!q.node_label.empty()) check_label_name(q.node_label);
  NodeWindow window(node, q.start, q.end, q.step_s);
  // GPU and host entries give different fields: reading the GPU ones
  // first keeps each field's first-source rule.
  const bool gpu_done =
      read.remote() && read_gpu_series(client, q, node, read, window, cancel);
  const auto all = entries();
  auto add = [&](const QueryBatch& b, std::vector<http::prom::Series>&& got) {
    auto split = split_batch(b, std::move(got));
    for (size_t i = 0; i < b.entries.size(); ++i)
      window.add(all[b.entries[i]], split[i]);
  };
  auto ask = [&](const QueryBatch& b) {
    return client.query_range(b.query, q.start, q.end, q.step_s, cancel);
  };
  auto failed = [](const QueryBatch& b, const http::prom::Result& r) {
    return std::runtime_error("asking for " + batch_fields(b) + ": " + r.error);
  };
  for (const QueryBatch& batch :
       query_batches(node, q.step_s, window.steps(), client.limits().max_points,
                     !gpu_done)) {
    auto r = ask(batch);
    if (r.ok) {
      add(batch, std::move(r.series));
      continue;
    }
    if (batch.entries.size() == 1 || cancel.cancelled()) throw failed(batch, r);
    // A batch the server refuses (a limit of its own on a query's length
    // or samples) or cannot answer is asked again entry by entry: the
    // same answers, and an error names its entry. The node's deadline
    // bounds the time this can take.
    for (size_t index : batch.entries) {
      const QueryBatch one{{index}, query_of(all[index], node, q.step_s)};
      auto r1 = ask(one);
      if (!r1.ok) throw failed(one, r1);
      add(one, std::move(r1.series));
    }
  }
  return window;
}

}  // namespace gd::promsource
