// What the user of `top` has chosen: sort, filters, selection, tags, tree,
// which overlay is open. Changed only by keys (keys.h); read by the row
// builder and the layout. No terminal here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>

namespace gd::top {

enum class Column {
  kGpu,
  kPid,
  kUser,
  kGpuMem,
  kSm,
  kCpu,
  kRss,
  kState,
  kTime,
  kContainer,
  kCommand,
};
inline constexpr size_t kColumnCount = 11;
const char* column_title(Column c);
// Larger values first when not reversed (memory, CPU, time...); names and
// ids ascending.
bool column_descending_by_default(Column c);

enum class Overlay { kNone, kHelp, kDetails, kFinding, kWho, kKill };
enum class Focus { kProcesses, kFindings };
// Which pair of charts each GPU shows.
enum class ChartSet { kUtilMem, kTempPower, kClocks, kPcie };
inline constexpr size_t kChartSetCount = 4;
const char* chart_set_name(ChartSet c);

// A process row is (GPU, pid) for a GPU process and (-1, pid) for a worker.
struct RowKey {
  int gpu = -1;
  uint32_t pid = 0;
  bool operator==(const RowKey&) const = default;
};

struct TopState {
  Column sort = Column::kGpuMem;
  bool reverse = false;
  bool tree = false;  // workers shown under their GPU process
  std::string text_filter;
  std::optional<std::string> user_filter;
  std::optional<int> gpu_filter;

  Focus focus = Focus::kProcesses;
  std::optional<RowKey> selected;
  size_t scroll = 0;  // first process row shown
  std::set<uint32_t> tagged;
  size_t finding = 0;  // selected finding

  Overlay overlay = Overlay::kNone;
  size_t overlay_scroll = 0;
  std::optional<RowKey> details_of;  // kDetails: the process
  int who_gpu = 0;                   // kWho
  ChartSet charts = ChartSet::kUtilMem;

  // Typing a filter: the text so far (nullopt: not typing).
  std::optional<std::string> typing;
  // One line for the footer (what a key did, why it was refused) until
  // message_until (a time of the caller's clock).
  std::string message;
  double message_until = 0;

  bool readonly = false;  // --readonly, a replay, or a remote without opt-in
  std::string readonly_reason;
  bool replay = false;  // Space pauses, arrows left/right seek
};

}  // namespace gd::top
