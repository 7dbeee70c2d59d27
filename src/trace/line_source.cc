#include "trace/line_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "trace/trace_io.h"

namespace gd {
namespace {

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

  // Sniff the first bytes for the zstd magic number; they are handed to the
  // reader as the start of the stream.
  std::string prefix(sizeof kZstdMagic, '\0');
  size_t got = 0;
  while (got < prefix.size()) {
    const ssize_t r = ::read(fd_, prefix.data() + got, prefix.size() - got);
    if (r == 0) break;
    if (r < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::strerror(errno);
      if (own_fd_) ::close(fd_);
      throw TraceError(name_ + ": read error: " + why);
    }
    got += static_cast<size_t>(r);
  }
  prefix.resize(got);
  compressed_ = got == sizeof kZstdMagic &&
                std::memcmp(prefix.data(), kZstdMagic, got) == 0;
  try {
    reader_ =
        std::make_unique<ChunkReader>(fd_, std::move(prefix), compressed_);
  } catch (...) {
    if (own_fd_) ::close(fd_);
    throw;
  }
}

LineSource::~LineSource() {
  reader_.reset();  // joins the reading thread before the fd goes
  if (own_fd_) ::close(fd_);
}

void LineSource::throw_end() const {
  const std::string at = name_ + ":" + std::to_string(line_number_ + 1);
  switch (reader_->end()) {
    case ChunkReader::End::kReadError:
      throw TraceError(name_ + ": read error: " + reader_->detail());
    case ChunkReader::End::kCorrupt:
      throw TraceError(at + ": corrupt zstd data: " + reader_->detail());
    case ChunkReader::End::kTruncated:
      throw TraceError(
          at +
          ": zstd stream is truncated (the writer did not close it, e.g. "
          "it was killed; the " +
          std::to_string(line_number_) + " lines before are intact)");
    case ChunkReader::End::kEof:
      break;
  }
  throw TraceError(name_ + ": internal error: no end to report");
}

bool LineSource::refill() {
  ChunkReader::Chunk chunk;
  if (!reader_->next(chunk)) {
    if (reader_->end() != ChunkReader::End::kEof) throw_end();
    return false;
  }
  const size_t partial = end_ - begin_;
  constexpr size_t kHeadroom = ChunkReader::kHeadroom;
  if (partial <= kHeadroom) {
    // The usual case: the unfinished line goes into the new chunk's headroom
    // and the chunk becomes the buffer; only that line is copied.
    char* data = chunk.buf.get() + kHeadroom;
    if (partial) std::memcpy(data - partial, buf_.get() + begin_, partial);
    if (buf_is_chunk_) reader_->recycle(std::move(buf_));
    buf_ = std::move(chunk.buf);
    buf_is_chunk_ = true;
    cap_ = kHeadroom + ChunkReader::kPayload;
    begin_ = kHeadroom - partial;
    scan_ = kHeadroom;
    end_ = kHeadroom + chunk.size;
    return true;
  }
  // A line longer than the headroom: gather it in a buffer of our own.
  const size_t need = partial + chunk.size;
  if (need > kMaxLine) {
    throw TraceError(name_ + ":" + std::to_string(line_number_ + 1) +
                     ": line is longer than " + std::to_string(kMaxLine >> 20) +
                     " MiB (is this a trace?)");
  }
  if (buf_is_chunk_ || begin_ + need > cap_) {
    const size_t cap = need > 2 * partial ? need : 2 * partial;
    auto bigger = std::make_unique<char[]>(cap + kPadding);
    std::memcpy(bigger.get(), buf_.get() + begin_, partial);
    if (buf_is_chunk_) reader_->recycle(std::move(buf_));
    buf_ = std::move(bigger);
    buf_is_chunk_ = false;
    cap_ = cap;
    scan_ -= begin_;
    end_ -= begin_;
    begin_ = 0;
  }
  std::memcpy(buf_.get() + end_, chunk.buf.get() + kHeadroom, chunk.size);
  end_ += chunk.size;
  reader_->recycle(std::move(chunk.buf));
  return true;
}

bool LineSource::next(std::string_view& line) {
  while (true) {
    char* base = buf_.get();
    if (scan_ < end_) {
      if (auto* nl = static_cast<char*>(
              std::memchr(base + scan_, '\n', end_ - scan_))) {
        const size_t nl_at = static_cast<size_t>(nl - base);
        line = std::string_view(base + begin_, nl_at - begin_);
        begin_ = scan_ = nl_at + 1;
        ++line_number_;
        return true;
      }
      scan_ = end_;
    }
    if (eof_) {
      if (begin_ == end_) return false;
      // Last line without a trailing newline.
      line = std::string_view(base + begin_, end_ - begin_);
      begin_ = scan_ = end_;
      ++line_number_;
      return true;
    }
    if (!refill()) eof_ = true;
  }
}

}  // namespace gd
