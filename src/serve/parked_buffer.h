// The bytes of a streamed reply between the thread that makes them and
// libmicrohttpd's event loop that sends them. The loop drains the buffer
// from a response callback; when it is empty the connection is parked
// (suspended: no busy loop, no thread) until the producer puts more or
// finishes. The buffer is bounded: a slow client makes the producer wait
// for room, never grows memory.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace gd {

class ParkedBuffer {
 public:
  enum class Read { kData, kWait, kEnd, kError };

  explicit ParkedBuffer(size_t max_bytes) : max_bytes_(max_bytes) {}

  // The HTTP layer's suspend and resume of the connection, called under
  // the buffer's lock (see EventStream::set_hooks).
  void set_hooks(std::function<void()> suspend, std::function<void()> resume);

  // Event loop: up to `max` bytes into `buf` (kData, n set); kWait parks
  // the connection until there is more; kEnd once the producer finished
  // and all was read; kError when it failed, was cancelled or aborted.
  Read read(char* buf, size_t max, size_t& n);

  // Producer: appends `bytes`, waiting for room; false once cancelled or
  // aborted (the producer should stop).
  bool put(std::string_view bytes);
  // Producer: nothing more comes; `failed` ends the reply with an error
  // (a truncated body) instead of its end.
  void finish(bool failed = false);

  // The reader is gone (its response freed): hooks dropped, put() fails.
  void cancel();
  // Serve stops: put() fails, and a parked connection is resumed so that
  // its next read ends it (libmicrohttpd stops only with none suspended).
  void abort();
  bool finished() const;

 private:
  void resume_locked();

  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::condition_variable room_;
  std::string buffer_;
  size_t offset_ = 0;
  bool done_ = false, failed_ = false, cancelled_ = false;
  bool suspended_ = false;
  std::function<void()> suspend_, resume_;
};

}  // namespace gd
