// A live window that starts from recent history: the samples of a trace
// held in memory (the body of serve's /api/v1/export), then those of the
// live source. A live diagnose on a node where serve runs thus judges the
// last minutes at once instead of only what it samples itself.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "diagnose/engine.h"
#include "trace/trace_io.h"

namespace gd {

class HistoryThenLiveSource : public SampleSource {
 public:
  // `history`: a whole trace, plain or zstd. Throws TraceError when it is
  // not one (no header). A bad line later, or a cut-off end (serve failed
  // midway), ends the history there: the window goes on with live samples
  // and history_error() says why.
  HistoryThenLiveSource(const std::string& history, SampleSource& live);
  ~HistoryThenLiveSource() override;

  bool next(Sample& out) override;

  // The window's two parts, history (from `url`) first, for the report.
  std::vector<WindowPart> parts(const std::string& url) const;
  // Why the history ended early; "" when it was read to its end.
  const std::string& history_error() const { return history_error_; }

 private:
  int fd_ = -1;  // the history, as a file the trace reader can read
  std::unique_ptr<TraceReader> history_;
  SampleSource& live_;
  WindowPart from_history_{"serve", "", 0, 0, 0};
  WindowPart from_live_{"live", "", 0, 0, 0};
  std::string history_error_;
};

}  // namespace gd
