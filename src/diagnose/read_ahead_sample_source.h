// Reads a slow source (a trace: decompress + parse) on its own thread while
// the rules run on the caller's, so `diagnose --from` takes about as long as
// the slower of the two instead of their sum. A bounded number of samples
// is read ahead; their storage is recycled, so memory stays flat.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "diagnose/engine.h"

namespace gd {

class ReadAheadSampleSource : public SampleSource {
 public:
  // `inner` is used only by the reading thread until this object is
  // destroyed; `depth` samples at most are read ahead.
  explicit ReadAheadSampleSource(SampleSource& inner, size_t depth = 64);
  ~ReadAheadSampleSource() override;
  ReadAheadSampleSource(const ReadAheadSampleSource&) = delete;
  ReadAheadSampleSource& operator=(const ReadAheadSampleSource&) = delete;

  // Rethrows, in order, what the inner source threw.
  bool next(Sample& out) override;

 private:
  void read_loop();
  // A consumer that ran dry waits for this many samples (or the end).
  size_t batch() const { return depth_ < 8 ? depth_ : 8; }

  SampleSource& inner_;
  std::mutex mu_;
  // Each side is woken only when the other actually waits for it: waking
  // per sample costs more than parsing one.
  std::condition_variable sample_ready_, room_free_;
  bool consumer_waits_ = false, reader_waits_ = false;
  std::deque<Sample> ready_;   // read, not yet taken
  std::vector<Sample> spare_;  // storage handed back for reuse
  size_t depth_;
  bool done_ = false;      // the inner source ended or threw
  bool stopping_ = false;  // the consumer is gone
  std::exception_ptr error_;
  std::thread reader_;  // last: starts after everything above exists
};

}  // namespace gd
