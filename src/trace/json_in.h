// JSON text (one trace line) -> model, with simdjson. Internal to gd_trace:
// TraceReader calls these on its own line buffer, which already has the
// padding simdjson needs, so lines are parsed where they lie without a copy.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/process_budget.h"
#include "model/sample.h"
#include "model/sample_fields.h"

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

struct Loc;      // json_in_read.h
class KeyIndex;  // json_in_fields.cc

// Reads only the fields a consumer asks for (model/sample_fields.h) with
// simdjson's On-Demand API, stepping over the others without building them
// (json_in_fields.cc). `out` is overwritten completely: what was not asked
// for is unknown, but for a line the walk does not read as asked, which
// parse_sample reads whole: one whose processes are past the budget (the
// full parser keeps those the budget chooses) and one the walk refuses (its
// error is then the full parser's, or the full parser reads it: a key
// given twice, wrong the first time). One reader is shared by threads:
// parse() keeps no state.
class SampleFieldsReader {
 public:
  // TraceError for a GPU field name that is not a numeric field of a GPU's
  // sample.
  SampleFieldsReader(const SampleFields& fields, const ProcessBudget& budget);
  ~SampleFieldsReader();
  SampleFieldsReader(const SampleFieldsReader&) = delete;
  SampleFieldsReader& operator=(const SampleFieldsReader&) = delete;
  void parse(simdjson::ondemand::parser& parser,
             simdjson::dom::parser& full_parser, const char* data, size_t len,
             const std::string& where, Sample& out) const;

  using SetGpu = void (*)(const Loc&, std::string_view,
                          simdjson::ondemand::value&, GpuSample&);

 private:
  // The walk over the fields asked for; false for a line whose processes
  // are past the budget. Throws TraceError.
  bool walk(simdjson::ondemand::parser& parser, const char* data, size_t len,
            const std::string& where, Sample& out) const;
  void gpu(const Loc& loc, simdjson::ondemand::value& v, GpuSample& o) const;
  struct GpuRead {
    std::string_view name;
    SetGpu set;
  };
  std::vector<GpuRead> gpu_;
  bool process_tree_;
  ProcessBudget budget_;
  // A GPU's keys: kGpuIndex.. kGpuProcesses, then gpu_[i] as kGpuNamed + i.
  enum { kGpuIndex, kGpuLost, kGpuStale, kGpuProcesses, kGpuNamed };
  std::unique_ptr<KeyIndex> gpu_keys_;
};

}  // namespace gd::json_in
