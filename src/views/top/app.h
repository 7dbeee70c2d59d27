// `gpudoctor top`'s screen loop: takes frames from a feed (monitor/), keys
// from the terminal, and redraws when either changes; it sleeps in poll()
// between them, so an idle screen costs nothing between samples.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "model/sample.h"
#include "monitor/feed.h"
#include "monitor/kill_job.h"

namespace gd::top {

struct TopOptions {
  bool monochrome = false;  // --mono, NO_COLOR, or a terminal without colour
  // Keys that act (k) are refused, with this reason on the screen.
  bool readonly = false;
  std::string readonly_reason;
  bool replay = false;  // Space pauses, +/- speed, Left/Right seek
  // Live only: who reads this machine's /proc and device files.
  bool live = false;
  std::string proc_root = "/proc", dev_prefix = "/dev";
  // Where `k` plans and runs (this machine, or serve's node with
  // --connect); unset: k is not available.
  std::function<std::unique_ptr<monitor::KillBackend>()> kill_backend;
  monitor::KillJobOptions kill;
  // Tests and benchmarks: quit after this many frames with a sample have
  // been drawn (0: never).
  int exit_after_frames = 0;
  // Once the second sample is taken, let go of the code pages
  // start-up mapped (drop_code_pages): a view kept open for days holds only
  // what it runs.
  bool drop_code_pages = true;
};

// Runs until q / Ctrl-C / SIGTERM; returns the exit code (0). Throws
// TerminalError when there is no usable terminal.
int run_top(monitor::Feed& feed, const TopOptions& options);

}  // namespace gd::top
