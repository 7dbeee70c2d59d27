// Turns a frame of the monitor and the user's choices into the screen
// (screen.h): header, live findings strip, one panel per GPU, charts, host
// strip, process table and footer, or an overlay (help, details, who,
// kill). Sizes adapt from 80x24 up; nothing here touches a terminal.
#pragma once

#include <map>
#include <vector>

#include "model/sample.h"
#include "monitor/frame.h"
#include "monitor/kill_job.h"
#include "procmgmt/gpu_memory_account.h"
#include "views/top/rows.h"
#include "views/top/screen.h"
#include "views/top/state.h"

namespace gd::top {

struct LayoutInput {
  const monitor::Frame* frame = nullptr;
  const std::vector<ProcRow>* rows = nullptr;  // build_rows of the frame
  // The ProcessTree of the frame's sample, built once per sample (null:
  // each figure that needs it builds its own).
  const ProcessTree* tree = nullptr;
  const TopState* state = nullptr;
  // Each GPU's last answer and when it came (Unix s): a stale GPU's panel
  // shows them greyed.
  const std::map<int, std::pair<GpuSample, double>>* last_good = nullptr;
  double now = 0;  // wall clock (Unix s), for messages and "ago"
  const procmgmt::GpuMemoryAccount* who = nullptr;  // Overlay::kWho
  const monitor::KillJob* kill = nullptr;           // Overlay::kKill
  bool unicode = true;  // block and tree glyphs; ASCII otherwise
};

Screen layout(const LayoutInput& in, int width, int height);

// How many process rows fit on the screen at this size (for page keys).
int table_rows(const LayoutInput& in, int width, int height);

}  // namespace gd::top
