// What `gpudoctor top` shows at one moment, whatever feeds it (the live
// machine, a recorded trace, a remote `serve`): the latest sample, the
// recent history of each GPU for the charts, and the current findings of the
// diagnosis engine. A Frame is immutable once published; the screen takes a
// pointer to the newest one and never waits on the source.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/engine.h"
#include "model/sample.h"
#include "monitor/gpu_history.h"

namespace gd::monitor {

enum class SourceKind { kLive, kReplay, kRemote };

struct FindingsState {
  std::vector<Finding> findings;  // most severe first (sort_findings)
  // What produced them, for the strip's empty line and the help screen:
  // "diagnosis of the last 60 s" or "serve's alerts".
  std::string source;
  std::optional<double> evaluated_at;
  DiagnoseWindow window;
  size_t rules_checked = 0;
  // Rules that could not judge the window: no findings is then not "all
  // is well", and the strip says so.
  std::vector<NotJudged> not_judged;
  std::string error;  // the diagnosis or the request failed ("" if not)
};

struct ReplayState {
  bool paused = false;
  bool ended = false;  // the last sample of the trace is shown
  double speed = 1;    // trace seconds per wall second
  double start_t = 0;  // first sample of the trace
  double position_t = 0;
};

struct Frame {
  uint64_t seq = 0;  // grows by one per published frame
  SourceKind kind = SourceKind::kLive;
  std::string source_name;  // host, trace path or URL
  std::shared_ptr<const TraceHeader> header;
  std::shared_ptr<const Sample> sample;  // null until the first sample
  // Per GPU of the header, newest last; null until the first sample.
  std::shared_ptr<const GpuHistory> history;
  std::shared_ptr<const FindingsState> findings;
  double interval_s = 1;
  std::optional<ReplayState> replay;  // kReplay only
  // Something the user must know about the source now ("" none): the remote
  // does not answer, the trace is unreadable past line N.
  std::string problem;
  // Seconds the last sample took to collect (live), or the request (remote).
  double collect_s = 0;
};

}  // namespace gd::monitor
