// The parts of an /api/v1/history answer every History shares (the store's
// and --no-db's memory): which metrics a query may name, and the JSON of
// the series found.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "serve/history.h"
#include "store/history_store.h"

namespace gd {

// The metrics `q` asks for (its list, or its one metric). Throws
// HistoryQueryError naming the first that no history has.
std::vector<std::string> checked_metrics(const HistoryQuery& q);

// The reply: result i holds the series of metrics[i]. The single-metric
// form (q.multi false) has the first only. `kept_in_memory_s`: see
// api::HistoryJsonWriter.
std::string history_reply_json(
    const HistoryQuery& q, const std::vector<std::string>& metrics,
    const std::vector<std::vector<HistorySeries>>& results,
    uint64_t skipped_blocks,
    std::optional<double> kept_in_memory_s = std::nullopt);

}  // namespace gd
