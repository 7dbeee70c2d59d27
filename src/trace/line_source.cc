#include "trace/line_source.h"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>

#include "trace/trace_io.h"

namespace gd {
namespace {

constexpr size_t kChunk = size_t{1} << 20;
constexpr unsigned char kZstdMagic[4] = {0x28, 0xB5, 0x2F,
                                         0xFD};  // 0xFD2FB528 LE

}  // namespace

LineSource::LineSource(const std::string& path)
    : name_(path == "-" ? "<stdin>" : path) {
  if (path == "-") {
    fd_ = 0;
  } else {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      throw TraceError(name_ + ": cannot open: " + std::strerror(errno));
    }
    own_fd_ = true;
  }
  cap_ = kChunk;
  buf_ = std::make_unique<char[]>(cap_ + kPadding);

  // Sniff the first bytes for the zstd magic number.
  while (end_ < sizeof kZstdMagic) {
    const size_t n = read_some(buf_.get() + end_, cap_ - end_);
    if (n == 0) break;
    end_ += n;
  }
  if (end_ >= sizeof kZstdMagic &&
      std::memcmp(buf_.get(), kZstdMagic, sizeof kZstdMagic) == 0) {
    dctx_ = ZSTD_createDCtx();
    if (!dctx_) throw TraceError(name_ + ": out of memory for zstd");
    in_.resize(ZSTD_DStreamInSize() > kChunk ? ZSTD_DStreamInSize() : kChunk);
    std::memcpy(in_.data(), buf_.get(), end_);
    in_len_ = end_;
    end_ = 0;
  }
}

LineSource::~LineSource() {
  if (dctx_) ZSTD_freeDCtx(dctx_);
  if (own_fd_) ::close(fd_);
}

size_t LineSource::read_some(char* dst, size_t n) {
  while (true) {
    const ssize_t r = ::read(fd_, dst, n);
    if (r >= 0) return static_cast<size_t>(r);
    if (errno != EINTR) {
      throw TraceError(name_ + ": read error: " + std::strerror(errno));
    }
  }
}

size_t LineSource::decompress_some(char* dst, size_t n) {
  ZSTD_outBuffer out{dst, n, 0};
  while (out.pos == 0) {
    if (in_pos_ == in_len_ && !in_eof_) {
      in_len_ = read_some(in_.data(), in_.size());
      in_pos_ = 0;
      in_eof_ = in_len_ == 0;
    }
    ZSTD_inBuffer in{in_.data(), in_len_, in_pos_};
    const size_t r = ZSTD_decompressStream(dctx_, &out, &in);
    if (ZSTD_isError(r)) {
      throw TraceError(name_ + ":" + std::to_string(line_number_ + 1) +
                       ": corrupt zstd data: " + ZSTD_getErrorName(r));
    }
    const bool progress = in.pos != in_pos_ || out.pos != 0;
    in_pos_ = in.pos;
    if (progress) {
      frame_open_ = r != 0;  // 0: a frame just ended
    } else if (in_eof_) {
      if (frame_open_) {
        throw TraceError(
            name_ + ":" + std::to_string(line_number_ + 1) +
            ": zstd stream is truncated (the writer did not close it, e.g. "
            "it was killed; the " +
            std::to_string(line_number_) + " lines before are intact)");
      }
      return 0;
    }
  }
  return out.pos;
}

size_t LineSource::fill() {
  char* dst = buf_.get() + end_;
  const size_t room = cap_ - end_;
  return dctx_ ? decompress_some(dst, room) : read_some(dst, room);
}

void LineSource::grow() {
  if (cap_ >= kMaxLine) {
    throw TraceError(name_ + ":" + std::to_string(line_number_ + 1) +
                     ": line is longer than " + std::to_string(kMaxLine >> 20) +
                     " MiB (is this a trace?)");
  }
  auto bigger = std::make_unique<char[]>(2 * cap_ + kPadding);
  std::memcpy(bigger.get(), buf_.get(), end_);
  buf_ = std::move(bigger);
  cap_ *= 2;
}

bool LineSource::next(std::string_view& line) {
  while (true) {
    char* base = buf_.get();
    if (auto* nl =
            static_cast<char*>(std::memchr(base + scan_, '\n', end_ - scan_))) {
      const size_t nl_at = static_cast<size_t>(nl - base);
      line = std::string_view(base + begin_, nl_at - begin_);
      begin_ = scan_ = nl_at + 1;
      ++line_number_;
      return true;
    }
    scan_ = end_;
    if (eof_) {
      if (begin_ == end_) return false;
      // Last line without a trailing newline.
      line = std::string_view(base + begin_, end_ - begin_);
      begin_ = scan_ = end_;
      ++line_number_;
      return true;
    }
    if (begin_ > 0) {  // keep only the partial line
      std::memmove(base, base + begin_, end_ - begin_);
      end_ -= begin_;
      scan_ -= begin_;
      begin_ = 0;
    }
    if (cap_ - end_ < kChunk / 2) grow();
    const size_t n = fill();
    if (n == 0) eof_ = true;
    end_ += n;
  }
}

}  // namespace gd
