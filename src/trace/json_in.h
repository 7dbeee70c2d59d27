// JSON text (one trace line) -> model, with simdjson. Internal to gd_trace:
// TraceReader calls these on its own line buffer, which already has the
// padding simdjson needs, so lines are parsed where they lie without a copy.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <string>

#include "model/process_budget.h"
#include "model/sample.h"

namespace gd::json_in {

// `data` must be followed by simdjson::SIMDJSON_PADDING readable bytes (their
// content does not matter). `out` is overwritten completely; its vectors and
// strings keep their capacity, so a reader that reuses one Sample allocates
// almost nothing per line. Throws TraceError("WHERE: path.field: problem").
// Processes past `budget` are counted in out.processes_left_out, not kept.
void parse_sample(simdjson::dom::parser& parser, const char* data, size_t len,
                  const std::string& where, Sample& out,
                  const ProcessBudget& budget);

// Also checks "format" and "version".
TraceHeader parse_header(simdjson::dom::parser& parser, const char* data,
                         size_t len, const std::string& where);

}  // namespace gd::json_in
