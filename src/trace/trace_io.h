// Trace reading and writing (docs/trace-format.md): JSON Lines, optionally
// zstd-compressed (.zst). Streaming in both directions: a reader holds one
// line.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "model/process_budget.h"
#include "model/sample.h"
#include "model/sample_fields.h"

namespace gd {

// what() is "FILE:LINE: what is wrong" (or "FILE: what is wrong").
struct TraceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One JSON object on one line, no trailing newline.
std::string header_to_json(const TraceHeader& h);
std::string sample_to_json(const Sample& s);

// Strict parsers; `where` prefixes error messages ("trace.jsonl:7"). A
// sample keeps its processes within the default ProcessBudget.
TraceHeader header_from_json(std::string_view line, const std::string& where);
Sample sample_from_json(std::string_view line, const std::string& where);

// For writers that reuse a buffer: append one line's JSON (no newline) to
// `out`. Throw TraceError for what cannot be written (t not finite,
// faults_json not valid JSON).
void append_header_json(std::string& out, const TraceHeader& h);
void append_sample_json(std::string& out, const Sample& s);
// Like sample_from_json, but parses into `out`, reusing its storage: cheaper
// in a loop. `out` is overwritten completely.
void sample_from_json(std::string_view line, const std::string& where,
                      Sample& out);

// Frees what the calling thread's sample_from_json, sample_fields_from_json
// and header_from_json keep for the next call (buffers ~6 times the longest
// line parsed): for a thread that parses a burst of lines now and then.
void release_thread_json_buffers();

// Like sample_from_json, but reads only `fields` (TraceReader::Options::
// fields): what a reader of those fields makes of the line.
void sample_fields_from_json(std::string_view line, const std::string& where,
                             const SampleFields& fields, Sample& out);

// path "-" = stdout; a path ending in ".zst" is written zstd-compressed.
class TraceWriter {
 public:
  explicit TraceWriter(const std::string& path);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  // write_header first and once; samples in time order (TraceError if not,
  // since the reader would reject the file).
  void write_header(const TraceHeader& h);
  void write_sample(const Sample& s);
  void flush();  // everything written so far is a valid trace on disk
  void close();  // ends a zstd stream; the destructor calls it too

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// path "-" = stdin; zstd input is recognised by its magic number.
// The constructor reads and validates the header (throws TraceError).
class TraceReader {
 public:
  struct Options {
    // Threads that parse sample lines ahead of next(), in parallel; 0 parses
    // each line in next() on the caller's thread. Parsing is most of the
    // cost of reading a trace, so a reader that has other work to do (the
    // rules of `diagnose --from`) gives it threads.
    int parse_threads = 0;
    // What one sample keeps of its processes (serve's budget): a trace
    // line listing a million processes costs what 512 do.
    ProcessBudget process_budget;
    // Only these fields of each sample (model/sample_fields.h), the others
    // stepped over unread and left unknown: a report over a week of a
    // trace reads its accounted fields at a fraction of the cost. nullopt:
    // every field. A GPU field name that is not a numeric field of a GPU's
    // sample is a TraceError from the constructor.
    std::optional<SampleFields> fields;
  };
  explicit TraceReader(const std::string& path) : TraceReader(path, {}) {}
  TraceReader(const std::string& path, Options options);
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;
  const TraceHeader& header() const;
  // false at end of file; throws TraceError. Blank lines are skipped; t
  // must not decrease. Reusing one `out` across calls saves allocations.
  bool next(Sample& out);
  size_t line() const;  // 1-based number of the last line read

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gd
