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

#include <cstddef>
#include <functional>
#include <thread>

#include "serve/history.h"
#include "serve/parked_buffer.h"

namespace gd {

class TraceDownload {
 public:
  using Read = ParkedBuffer::Read;

  // `zstd`: compress (level 3); else plain JSON lines.
  TraceDownload(const History& history, double since, double until, bool zstd,
                size_t max_buffered_bytes);
  ~TraceDownload();  // cancels and joins
  TraceDownload(const TraceDownload&) = delete;
  TraceDownload& operator=(const TraceDownload&) = delete;

  // Hooks of the HTTP layer (see ParkedBuffer::set_hooks); before start().
  void set_hooks(std::function<void()> suspend, std::function<void()> resume) {
    buffer_.set_hooks(std::move(suspend), std::move(resume));
  }
  void start();
  // ParkedBuffer::read; kError: the store failed midway (the client gets a
  // truncated file, which a trace reader rejects).
  Read read(char* buf, size_t max, size_t& n) {
    return buffer_.read(buf, max, n);
  }
  // The client is gone (its response freed): the producer stops at its
  // next sample.
  void cancel() { buffer_.cancel(); }
  // Serve stops: the producer stops, and a connection parked on an empty
  // buffer is resumed so that its next read ends it.
  void abort() { buffer_.abort(); }
  bool finished() const { return buffer_.finished(); }

 private:
  void produce();

  const History& history_;
  const double since_, until_;
  const bool zstd_;
  ParkedBuffer buffer_;
  std::thread thread_;
};

}  // namespace gd
