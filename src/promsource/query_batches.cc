#include "promsource/query_batches.h"

#include <algorithm>
#include <string_view>

#include "promsource/node_window.h"
#include "promsource/read_node.h"

namespace gd::promsource {
namespace {

// PromQL's label_replace with an empty source label and regex adds the
// label to every series of `query` (the empty regex matches the absent
// label's empty value).
std::string tagged(const std::string& query, size_t index) {
  return "label_replace(" + query + ", \"" + kEntryLabel + "\", \"" +
         std::to_string(index) + "\", \"\", \"\")";
}

// Batches a scope's entries greedily in table order.
class Batcher {
 public:
  explicit Batcher(size_t max_entries) : max_entries_(max_entries) {}

  void add(size_t index, std::string query) {
    if (!open_.empty() &&
        (open_.size() >= max_entries_ ||
         text_size() + query.size() + 64 > kMaxBatchQueryBytes))
      close();
    open_.push_back(index);
    queries_.push_back(std::move(query));
  }

  std::vector<QueryBatch> take() {
    close();
    return std::move(out_);
  }

 private:
  size_t text_size() const {
    size_t n = 0;
    for (const auto& q : queries_) n += q.size() + 64;
    return n;
  }

  void close() {
    if (open_.empty()) return;
    QueryBatch b;
    b.entries = open_;
    if (open_.size() == 1) {
      b.query = queries_[0];
    } else {
      for (size_t i = 0; i < open_.size(); ++i)
        b.query += (i ? " or " : "") + tagged(queries_[i], open_[i]);
    }
    out_.push_back(std::move(b));
    open_.clear();
    queries_.clear();
  }

  size_t max_entries_;
  std::vector<size_t> open_;
  std::vector<std::string> queries_;
  std::vector<QueryBatch> out_;
};

}  // namespace

std::vector<QueryBatch> query_batches(const NodeSelector& node, double step_s,
                                      size_t steps, size_t max_points,
                                      bool with_gpu) {
  const auto all = entries();
  // GPU entries: each may answer a series per GPU at every step.
  const size_t per_entry =
      std::max<size_t>(1, steps) * static_cast<size_t>(kMaxGpusPerNode);
  const size_t gpu_batch =
      std::clamp<size_t>(max_points / per_entry, 1, kMaxBatchEntries);
  Batcher gpu(gpu_batch), host(kMaxBatchEntries);
  std::vector<QueryBatch> processes;
  for (size_t i = 0; i < all.size(); ++i) {
    const Entry& e = all[i];
    std::string q = query_of(e, node, step_s);
    if (e.scope == Scope::kHost) {
      host.add(i, std::move(q));
    } else if (!with_gpu) {
      continue;
    } else if (e.scope == Scope::kProcess) {
      processes.push_back({{i}, std::move(q)});
    } else {
      gpu.add(i, std::move(q));
    }
  }
  // GPU, then process, then host entries: each scope in the table's order.
  std::vector<QueryBatch> out = gpu.take();
  for (auto& b : processes) out.push_back(std::move(b));
  for (auto& b : host.take()) out.push_back(std::move(b));
  return out;
}

std::vector<std::vector<http::prom::Series>> split_batch(
    const QueryBatch& batch, std::vector<http::prom::Series>&& series) {
  std::vector<std::vector<http::prom::Series>> out(batch.entries.size());
  if (batch.entries.size() == 1) {
    out[0] = std::move(series);
    return out;
  }
  for (auto& s : series) {
    auto tag =
        std::find_if(s.labels.begin(), s.labels.end(),
                     [](const auto& l) { return l.first == kEntryLabel; });
    if (tag == s.labels.end()) continue;
    const std::string value = tag->second;
    s.labels.erase(tag);
    for (size_t i = 0; i < batch.entries.size(); ++i)
      if (value == std::to_string(batch.entries[i])) {
        out[i].push_back(std::move(s));
        break;
      }
  }
  return out;
}

std::string batch_fields(const QueryBatch& batch) {
  const auto all = entries();
  std::string first = all[batch.entries.front()].field;
  if (batch.entries.size() == 1)
    return first + " (" + all[batch.entries.front()].query + ")";
  return first + " and " + std::to_string(batch.entries.size() - 1) +
         " more fields";
}

}  // namespace gd::promsource
