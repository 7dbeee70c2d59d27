// `top --from TRACE`: a recorded trace replayed at its own pace (or faster,
// slower, paused), with seeking, for post-mortems. The findings strip runs
// the diagnosis over the minute of trace before the position, as it would
// have shown live.
#pragma once

#include <condition_variable>
#include <thread>

#include "monitor/feed.h"
#include "monitor/window_diagnosis.h"
#include "trace/trace_io.h"

namespace gd::monitor {

class ReplayFeed : public Feed {
 public:
  static constexpr double kMinSpeed = 1.0 / 16, kMaxSpeed = 64;

  // Reads the header at once: throws TraceError for an unreadable trace.
  // A trace from stdin ("-") cannot seek backwards.
  ReplayFeed(std::string path, double speed = 1, WindowOptions window = {});
  ~ReplayFeed() override;

  void start() override;
  void stop() override;
  void control(ReplayCommand c) override;

  const TraceHeader& header() const { return *header_; }

 private:
  void run();
  // Next sample into next_; false at the end (or on an error, kept in
  // problem_).
  bool read_next();
  // Reads from the start (backward) or onwards (forward) to the first
  // sample at or after `t`, feeding the diagnosis window on the way.
  void seek_to(double t);
  void show_current();

  std::string path_;
  std::unique_ptr<TraceReader> reader_;
  std::shared_ptr<const TraceHeader> header_;
  WindowDiagnosis diagnosis_;
  GpuHistory history_;
  std::shared_ptr<const FindingsState> findings_;
  std::shared_ptr<const Sample> current_;
  Sample next_;
  bool have_next_ = false;
  std::string problem_;
  double start_t_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  // Shared with control() under mu_.
  bool paused_ = false;
  double speed_ = 1;
  double seek_by_ = 0;    // requested, not yet done
  bool changed_ = false;  // a command came since the thread last looked
  std::thread thread_;
};

}  // namespace gd::monitor
