// `top` on this machine: the Sampler on its own thread at the interval (each
// GPU read bounded by its deadline, so a hung GPU comes back stale and the
// rest of the sample goes on), the charts' history, and the diagnosis over
// the last minute.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "collect/sampler.h"
#include "monitor/feed.h"
#include "monitor/window_diagnosis.h"

namespace gd::monitor {

class LiveFeed : public Feed {
 public:
  LiveFeed(const SamplerOptions& sampler_options, double interval_s,
           WindowOptions window = {});
  ~LiveFeed() override;

  void start() override;
  void stop() override;

  const TraceHeader& header() const { return *header_; }
  // A fresh sample, taken between the sampling thread's (for a kill
  // session, which re-reads NVML while it waits for memory to be freed).
  Sample sample_now();

 private:
  void run();
  void take_one();

  // The emptied process list of the last sample every frame and the window
  // are done with, handed back by its shared_ptr's deleter on whichever
  // thread let go of it last: the next sample reuses its memory (~300 KiB
  // at 575 processes), which would otherwise be mapped afresh each second,
  // ~50 page faults. Shared, so that a frame that outlives the feed can
  // still hand its sample back.
  struct SpentList {
    std::mutex mu;
    std::vector<ProcessSample> processes;  // empty, with its capacity
  };
  std::shared_ptr<SpentList> spent_ = std::make_shared<SpentList>();

  std::mutex sampler_mu_;
  Sampler sampler_;
  std::shared_ptr<const TraceHeader> header_;
  double interval_s_;
  WindowDiagnosis diagnosis_;
  GpuHistory history_;
  std::shared_ptr<const FindingsState> findings_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gd::monitor
