#include "trace/chunk_reader.h"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

namespace gd {
namespace {

bool is_regular_file(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

// How often a producer waiting on a pipe or terminal looks whether the
// consumer has gone (so destroying a reader never waits for input).
constexpr int kStopPollMs = 50;

}  // namespace

ChunkReader::ChunkReader(int fd, std::string prefix, bool zstd)
    : fd_(fd), waitable_(!is_regular_file(fd)), prefix_(std::move(prefix)) {
  if (zstd) {
    dctx_ = ZSTD_createDCtx();
    if (!dctx_) throw std::bad_alloc();
    const size_t in_size = ZSTD_DStreamInSize();
    in_.resize(in_size > kPayload ? in_size : kPayload);
  }
  thread_ = std::thread([this] { run(); });
}

ChunkReader::~ChunkReader() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  room_.notify_all();
  thread_.join();
  if (dctx_) ZSTD_freeDCtx(dctx_);
}

bool ChunkReader::next(Chunk& out) {
  std::unique_lock lock(mu_);
  ready_.wait(lock, [&] { return done_ || !queue_.empty(); });
  if (queue_.empty()) return false;
  out = std::move(queue_.front());
  queue_.pop_front();
  lock.unlock();
  room_.notify_one();
  return true;
}

void ChunkReader::recycle(std::unique_ptr<char[]> buf) {
  std::lock_guard lock(mu_);
  if (free_.size() < kQueued + 2) free_.push_back(std::move(buf));
}

void ChunkReader::run() {
  for (;;) {
    std::unique_ptr<char[]> buf;
    {
      std::unique_lock lock(mu_);
      room_.wait(lock, [&] { return stopping_ || queue_.size() < kQueued; });
      if (stopping_) return;
      if (!free_.empty()) {
        buf = std::move(free_.back());
        free_.pop_back();
      }
    }
    size_t n = 0;
    try {
      // Not zero-filled: 1.3 MiB written and faulted in for each buffer
      // was most of what reading a small trace cost (a fake NVML's
      // scenario at every start). Only the padding after the payload is
      // set, so that simdjson's reads past a line's end see bytes written.
      if (!buf) buf = std::make_unique_for_overwrite<char[]>(kBufferSize);
      n = produce(buf.get() + kHeadroom, kPayload);
      std::memset(buf.get() + kHeadroom + n, 0, kPadding);
    } catch (const std::bad_alloc&) {
      end_ = End::kReadError;
      detail_ = "out of memory";
      n = 0;
    }
    std::lock_guard lock(mu_);
    if (n == 0) {
      done_ = true;
      ready_.notify_one();
      return;
    }
    queue_.push_back(Chunk{std::move(buf), n});
    ready_.notify_one();
  }
}

size_t ChunkReader::produce(char* dst, size_t n) {
  if (finished_) return 0;
  if (dctx_) return decompress_some(dst, n);
  // Fill the chunk: fewer, larger chunks cost the consumer less.
  size_t got = 0;
  while (got < n) {
    const size_t r = read_some(dst + got, n - got);
    if (r == 0) {
      finished_ = true;
      break;
    }
    got += r;
    if (waitable_) break;  // a pipe: hand over what has arrived
  }
  return got;
}

size_t ChunkReader::read_some(char* dst, size_t n) {
  if (prefix_pos_ < prefix_.size()) {
    const size_t k = std::min(n, prefix_.size() - prefix_pos_);
    std::memcpy(dst, prefix_.data() + prefix_pos_, k);
    prefix_pos_ += k;
    return k;
  }
  while (!stopping_) {
    if (waitable_) {
      pollfd p{fd_, POLLIN, 0};
      const int ready = ::poll(&p, 1, kStopPollMs);
      if (ready == 0 || (ready < 0 && errno == EINTR)) continue;
    }
    const ssize_t r = ::read(fd_, dst, n);
    if (r >= 0) return static_cast<size_t>(r);
    if (errno == EINTR || errno == EAGAIN) continue;
    end_ = End::kReadError;
    detail_ = std::strerror(errno);
    return 0;
  }
  return 0;
}

size_t ChunkReader::decompress_some(char* dst, size_t n) {
  ZSTD_outBuffer out{dst, n, 0};
  while (out.pos < n && !finished_) {
    if (in_pos_ == in_len_ && !in_eof_) {
      in_len_ = read_some(in_.data(), in_.size());
      in_pos_ = 0;
      in_eof_ = in_len_ == 0;
      if (in_eof_ && end_ != End::kEof) {  // a read error, not the end
        finished_ = true;
        break;
      }
    }
    const size_t before = out.pos;
    ZSTD_inBuffer in{in_.data(), in_len_, in_pos_};
    const size_t r = ZSTD_decompressStream(dctx_, &out, &in);
    if (ZSTD_isError(r)) {
      end_ = End::kCorrupt;
      detail_ = ZSTD_getErrorName(r);
      finished_ = true;
      break;
    }
    const bool progress = in.pos != in_pos_ || out.pos != before;
    in_pos_ = in.pos;
    if (progress) {
      frame_open_ = r != 0;  // 0: a frame just ended
    } else if (in_eof_) {
      if (frame_open_) end_ = End::kTruncated;
      finished_ = true;
    }
  }
  return out.pos;
}

}  // namespace gd
