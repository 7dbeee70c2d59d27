// Parses a trace's sample lines on several threads and hands the samples
// out in file order. One JSON line is the largest cost of reading a trace
// (a day of an 8-GPU server is 86,400 lines of 15 KB), and lines do not
// depend on each other, so `diagnose --from` parses them in parallel while
// its rules run on the caller's thread.
//
// Lines are taken from the source in batches; each worker copies a batch
// out (under a lock), parses it with its own parser, and queues it by
// sequence number. A bounded number of batches exists, each reused and
// each holding at most kBatchLines lines or kBatchBytes of text (or one
// longer line, and only one batch at a time holds such a line), so memory
// stays flat however long the trace is and however long its lines are.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "model/process_budget.h"
#include "model/sample.h"
#include "trace/line_source.h"

namespace gd {

namespace json_in {
class SampleFieldsReader;
}

class ParallelSampleParser {
 public:
  // `source` is positioned after the header and is read only by the worker
  // threads from now on, until this object is destroyed.
  // With `fields` (which must outlive this object), each line is read by
  // it: only the fields it was asked for.
  ParallelSampleParser(LineSource& source, int threads,
                       const ProcessBudget& budget,
                       const json_in::SampleFieldsReader* fields = nullptr);
  ~ParallelSampleParser();
  ParallelSampleParser(const ParallelSampleParser&) = delete;
  ParallelSampleParser& operator=(const ParallelSampleParser&) = delete;

  // The next sample in file order (its storage swapped with `out`'s) and
  // its 1-based line number; false at the end. The first error in file
  // order (a malformed line, a read error) is thrown after every sample
  // before it has been handed out, as a sequential reader would.
  bool next(Sample& out, size_t& line);

  static constexpr size_t kBatchLines = 16;
  static constexpr size_t kBatchBytes = size_t{1} << 20;

 private:
  struct Batch {
    uint64_t seq = 0;
    std::string text;  // the lines, each followed by padding for simdjson
    struct Line {
      size_t offset = 0, size = 0, number = 0;
    };
    std::vector<Line> lines;
    std::vector<Sample> samples;  // samples[i] is lines[i], i < parsed
    size_t parsed = 0;
    size_t taken = 0;          // handed out by next()
    std::exception_ptr error;  // what stopped the batch after `parsed`
    bool last = false;         // nothing follows this batch
    bool holds_long = false;   // has the one long line allowed at a time
  };

  void work();
  // Copies the next lines of the source into `b`; under source_mu_.
  void fill(Batch& b);
  void parse(Batch& b);
  // Waits until no other batch holds a line longer than kBatchBytes, then
  // takes that right for `b`; false when stopping. Under source_mu_.
  bool take_long_line(Batch& b);
  // A batch going back to the free list; under mu_.
  void release(std::unique_ptr<Batch> b);

  LineSource& source_;
  const ProcessBudget budget_;
  const json_in::SampleFieldsReader* fields_;
  std::mutex source_mu_;
  uint64_t next_seq_in_ = 0;  // under source_mu_
  bool source_done_ = false;  // under source_mu_

  std::mutex mu_;
  std::condition_variable parsed_cv_, free_cv_, long_cv_;
  // A batch holds a line longer than kBatchBytes: one such line at a time,
  // since parsing one costs about ten times its size.
  bool long_line_out_ = false;
  std::map<uint64_t, std::unique_ptr<Batch>> parsed_;  // waiting, by seq
  std::vector<std::unique_ptr<Batch>> free_;
  bool stopping_ = false;

  // The consumer's side (next() is called from one thread).
  std::unique_ptr<Batch> current_;
  uint64_t next_seq_out_ = 0;
  bool ended_ = false;

  std::vector<std::thread> workers_;  // last: they start after the above
};

}  // namespace gd
