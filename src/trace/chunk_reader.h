// Reads a file descriptor (plain bytes, or a zstd stream it decompresses) on a
// thread of its own, a few chunks ahead of the consumer. `diagnose --from`
// parses on parse threads (parallel_parse.h) and diagnoses on its main one;
// taking the read and the decompression off the parsers is what keeps a
// day-long zstd trace as fast as a plain one.
//
// Bounded: at most kQueued chunks wait, and their buffers are recycled.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

struct ZSTD_DCtx_s;

namespace gd {

class ChunkReader {
 public:
  // A chunk buffer holds kHeadroom bytes (free, for the consumer to put the
  // unfinished line of the previous chunk in front of this one), then the
  // payload, then kPadding bytes (simdjson reads past a line's end).
  static constexpr size_t kHeadroom = size_t{256} << 10;
  static constexpr size_t kPayload = size_t{1} << 20;
  static constexpr size_t kPadding = 64;
  static constexpr size_t kBufferSize = kHeadroom + kPayload + kPadding;
  static constexpr size_t kQueued = 4;

  struct Chunk {
    std::unique_ptr<char[]> buf;  // kBufferSize bytes
    size_t size = 0;              // payload bytes at buf + kHeadroom
  };

  // Why the stream ended.
  enum class End { kEof, kReadError, kCorrupt, kTruncated };

  // `prefix`: bytes already read from `fd` (the consumer sniffed them);
  // `zstd`: decompress. The fd stays the caller's and must outlive this.
  ChunkReader(int fd, std::string prefix, bool zstd);
  ~ChunkReader();
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // The next chunk, in order; false once the stream has ended (see end()).
  bool next(Chunk& out);
  // Gives a buffer of kBufferSize bytes back for reuse.
  void recycle(std::unique_ptr<char[]> buf);

  // Valid after next() returned false.
  End end() const { return end_; }
  const std::string& detail() const { return detail_; }  // strerror, zstd's

 private:
  void run();
  // Fills `dst` with up to `n` bytes; 0 at the end (end_ set).
  size_t produce(char* dst, size_t n);
  size_t read_some(char* dst, size_t n);  // raw bytes; 0 at EOF or stop
  size_t decompress_some(char* dst, size_t n);

  const int fd_;
  const bool waitable_;  // not a regular file: poll, so a stop is noticed
  std::string prefix_;
  size_t prefix_pos_ = 0;

  ZSTD_DCtx_s* dctx_ = nullptr;
  std::vector<char> in_;
  size_t in_pos_ = 0, in_len_ = 0;
  bool in_eof_ = false;
  bool frame_open_ = false;
  bool finished_ = false;  // the input or an error ended the stream

  std::mutex mu_;
  std::condition_variable ready_, room_;
  std::deque<Chunk> queue_;
  std::vector<std::unique_ptr<char[]>> free_;
  bool done_ = false;  // the producer reached the end
  // The consumer is gone. Written under mu_ (so a waiting producer wakes),
  // read without it while the producer waits for input.
  std::atomic<bool> stopping_{false};
  End end_ = End::kEof;
  std::string detail_;
  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace gd
