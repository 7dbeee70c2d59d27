// The frames of `top --prometheus` (fleet_feed.h makes them): every node
// of the fleet with its one sample, when it was last scraped, and what the
// point-in-time rules judged; and the source the screen takes them from
// (header-only, so that the screen's library links no HTTP client).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "check/check.h"
#include "promsource/fleet_state.h"

namespace gd::monitor {

struct FleetNodeState {
  promsource::FleetNode data;  // the last round's that listed it
  // In the newest round; false: not listed since (its series ended or
  // are older than the lookback), its values are the last ones.
  bool listed = true;
  double listed_at = 0;  // the round that last listed it
  check::Result judged;  // of data.sample, and of its window's scrapes
  // The scrapes the window rules last judged (FleetWindows), and the
  // seconds from the first to the last of them.
  size_t window_samples = 0;
  double window_span_s = 0;
  // top --connect's fleet: why its serve did not answer the newest round
  // ("" it did); its values, if any, are the last answer's.
  std::string problem;
};

// A GPU process of the node open in the fleet's node view: from serve's
// status reply (--connect), or from serve's gpudoctor_process_* series
// (--prometheus). Names come from the node: cut where read, shown through
// the one sanitiser.
struct FleetProcess {
  std::string pid;  // "other": a GPU's processes past serve's series bound
  int gpu = -1;
  std::string user, name;
  std::optional<uint64_t> gpu_mem_bytes;
  std::optional<double> cpu_pct;
};

// The most process rows one open node keeps, and the longest user or name.
inline constexpr size_t kMaxFleetProcesses = 512;
inline constexpr size_t kMaxFleetProcessText = 64;

struct FleetProcesses {
  std::string node;    // the node they are of
  bool asked = false;  // false: not read yet
  // Why there are none to show ("" when `rows` are the answer).
  std::string note;
  std::vector<FleetProcess> rows;  // by GPU, then GPU memory (largest first)
  size_t left_out = 0;             // past kMaxFleetProcesses
};

struct FleetFrame {
  uint64_t seq = 0;
  std::string source;  // the URL
  double interval_s = 5;
  double t = 0;        // the newest round's time; 0 before the first
  double round_s = 0;  // how long it took
  std::string error;   // the newest round failed ("": it did not)
  size_t nodes_left_out = 0;
  size_t series_unnamed = 0;          // promsource::FleetState's
  std::vector<FleetNodeState> nodes;  // by name
  // Who judged the nodes, for the node view ("": this top, from the
  // node's sample and its last 10 minutes of scrapes).
  std::string findings_of;
  // The processes of the node open in the node view (FleetSource::open).
  FleetProcesses processes;
  // What the nodes' windows hold when it is not their last 10 minutes
  // ("": it is, or the findings are the nodes' own serve's): read at start,
  // or why they could not be, so each window holds its scrapes since.
  std::string window_note;
};

// Where the screen takes fleet frames from: the newest whenever it likes,
// woken (wake_fd readable) when there is a new one.
class FleetSource {
 public:
  virtual ~FleetSource() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  // Asks for a round now (r on the screen).
  virtual void refresh() = 0;
  // The node view shows `node` (its processes are read on the source's
  // thread and come in the frames' `processes`), or none. A source that
  // reads no processes need not override them.
  virtual void open(const std::string& /*node*/) {}
  virtual void close() {}
  virtual std::shared_ptr<const FleetFrame> latest() const = 0;
  virtual int wake_fd() const = 0;
  virtual void drain_wake() = 0;
};

}  // namespace gd::monitor
