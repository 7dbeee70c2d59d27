// A node's range queries asked for a few at a time: the series table's
// entries (series_table.h) grouped into batches, each one query_range whose
// expression is its entries' queries joined by `or`, each tagged with its
// entry's index (label gd_entry), so a node read by query_range costs about
// a dozen requests instead of one per entry (78).
//
// A batch is bounded three ways: its entries (kMaxBatchEntries), its text
// (kMaxBatchQueryBytes: VictoriaMetrics refuses a query longer than 16 KiB
// by default) and its points (a GPU entry can give a series for each of
// kMaxGpusPerNode GPUs at every step, and all of a batch must fit the
// client's points bound). A per-process entry is never batched: its series
// are one per pid, as many as the client's series bound allows.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "http_client/prometheus_api.h"
#include "promsource/node_match.h"
#include "promsource/series_table.h"

namespace gd::promsource {

inline constexpr size_t kMaxBatchEntries = 16;
inline constexpr size_t kMaxBatchQueryBytes = 8000;
// The label that names a series' entry in a batch's answer.
inline constexpr const char* kEntryLabel = "gd_entry";

struct QueryBatch {
  std::vector<size_t> entries;  // indexes into entries(), in table order
  std::string query;            // one entry: its query as it is, untagged
};

// The batches of every entry the node is asked for by query_range (the
// GPU and process ones only when `with_gpu`), in the table's order within
// each scope. `steps` is the window's grid steps; `max_points` the client's
// bound on the points of one call.
std::vector<QueryBatch> query_batches(const NodeSelector& node, double step_s,
                                      size_t steps, size_t max_points,
                                      bool with_gpu);

// A batch's answer split by entry: out[i] the series of batch.entries[i],
// the tag label removed. Series with no tag, or a tag of no entry of the
// batch, are dropped. With one entry, every series is that entry's.
std::vector<std::vector<http::prom::Series>> split_batch(
    const QueryBatch& batch, std::vector<http::prom::Series>&& series);

// "util_pct", or "util_pct and 15 more fields": a batch in an error line.
std::string batch_fields(const QueryBatch& batch);

}  // namespace gd::promsource
