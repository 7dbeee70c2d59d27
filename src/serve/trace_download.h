// "Download trace" (/api/v1/export): the stored samples of a range as a
// trace (docs/trace-format.md, zstd-compressed unless asked otherwise), the
// same file `gpudoctor export` writes, streamed while it is read.
//
// A producer thread reads the store (on a connection of its own) and
// compresses into a bounded buffer; the HTTP layer drains that buffer from
// its event loop and, when it is empty, suspends the connection until the
// producer has more. A slow client therefore slows the producer (it waits
// for room), never grows memory; a client that goes away cancels it.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "serve/history.h"

namespace gd {

class TraceDownload {
 public:
  enum class Read { kData, kWait, kEnd, kError };

  // `zstd`: compress (level 3); else plain JSON lines.
  TraceDownload(const History& history, double since, double until, bool zstd,
                size_t max_buffered_bytes);
  ~TraceDownload();  // cancels and joins
  TraceDownload(const TraceDownload&) = delete;
  TraceDownload& operator=(const TraceDownload&) = delete;

  // Hooks of the HTTP layer (see EventStream::set_hooks); before start().
  void set_hooks(std::function<void()> suspend, std::function<void()> resume);
  void start();
  // Like EventStream::read; kError: the store failed midway (the client
  // gets a truncated file, which a trace reader rejects).
  Read read(char* buf, size_t max, size_t& n);
  // The client is gone (its response freed): the producer stops at its
  // next sample.
  void cancel();
  // Serve stops: the producer stops, and a connection parked on an empty
  // buffer is resumed so that its next read ends it.
  void abort();
  bool finished() const;

 private:
  void produce();
  // Appends compressed bytes, waiting for room; false when cancelled.
  bool put(std::string_view bytes);

  const History& history_;
  const double since_, until_;
  const bool zstd_;
  const size_t max_buffered_;
  mutable std::mutex mu_;
  std::condition_variable room_;
  std::string buffer_;
  size_t offset_ = 0;
  bool done_ = false, failed_ = false, cancelled_ = false;
  bool suspended_ = false;
  std::function<void()> suspend_, resume_;
  std::thread thread_;
};

}  // namespace gd
