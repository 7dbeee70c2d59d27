// `gpudoctor ps` with `serve` running: each process's GPU memory over the
// last minutes (monitor/serve_history.h fetches it), as sparkline lines
// under the table and as "memory_history" in the JSON.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "api/history_json.h"
#include "model/sample.h"
#include "views/ps_view.h"

namespace gd {

// Per pid, one series per GPU it is on.
using ProcessHistory = std::map<uint32_t, std::vector<api::HistorySeries>>;

// "" when serve had nothing for these rows; else a heading naming `since`
// ("10m") and one sparkline line per row.
std::string render_ps_history(const std::vector<PsRow>& rows,
                              const ProcessHistory& history,
                              const std::string& since);
// ps_to_json with each process's "memory_history": [[t, bytes], ...].
std::string ps_to_json_with_history(
    const Sample& sample, const std::vector<PsRow>& rows,
    const ProcessHistory& history,
    const std::vector<GpuOrphanHolders>& holders = {});
// One bar character per value, scaled from min to max: "▁▅█"; the scale
// spans at least 10% of the largest value, so a small wobble draws flat.
std::string sparkline(const std::vector<double>& values);

}  // namespace gd
