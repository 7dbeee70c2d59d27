// `top --prometheus URL`: the fleet screen. One row per node (its GPUs as
// compact bars of util and memory, the hottest temperature, the power
// drawn, its worst finding and how many, how old its data is), sorted worst
// first, filtered by `/`; Enter opens a node (its GPUs as top's panels, its
// findings and what could not be judged), q or Esc goes back. Built from a
// FleetFrame (monitor/fleet_frame.h) as plain data, like layout.h, so it is
// unit-tested without a terminal; run_fleet_top is the loop.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "monitor/fleet_frame.h"
#include "monitor/fleet_rows.h"
#include "views/top/keys.h"
#include "views/top/screen.h"

namespace gd::top {

// The rows, their status and order: monitor/fleet_rows.h, shared with
// serve's Fleet page so both give the same figures.
using monitor::fleet_rows;
using monitor::FleetRow;
using monitor::kFleetStaleS;
using monitor::NodeStatus;

struct FleetViewState {
  std::string filter;
  std::optional<std::string> typing;    // typing a filter
  std::optional<std::string> selected;  // node name
  size_t scroll = 0;
  std::optional<std::string> open;  // Enter: the node shown
  size_t open_scroll = 0;
};

struct FleetLayoutInput {
  const monitor::FleetFrame* frame = nullptr;
  const std::vector<FleetRow>* rows = nullptr;
  const FleetViewState* state = nullptr;
  double now = 0;
  bool unicode = true;
};

Screen fleet_layout(const FleetLayoutInput& in, int width, int height);
// Rows of the node list that fit at this size (page keys).
int fleet_table_rows(int height);

enum class FleetAction { kNone, kQuit, kRefresh };
// What a key does to the state; `rows` as shown, `page` rows a page.
FleetAction fleet_key(FleetViewState& st, const Key& key,
                      const std::vector<FleetRow>& rows, int page);
// Keeps the selection on a listed row and in view.
void settle_fleet_selection(FleetViewState& st,
                            const std::vector<FleetRow>& rows, int page);

struct FleetTopOptions {
  bool monochrome = false;
  int exit_after_frames = 0;  // tests: quit after N frames with a round
  // At the second round, let go of the code start-up ran (drop_code_pages).
  bool drop_code_pages = true;
};

// Runs until q / Ctrl-C / SIGTERM on the list; returns 0. Throws
// TerminalError without a usable terminal.
int run_fleet_top(monitor::FleetSource& source, const FleetTopOptions& o);

}  // namespace gd::top
