#include "trace/line_sink.h"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>

#include "trace/trace_io.h"

namespace gd {
namespace {

constexpr size_t kDrainAt = size_t{1} << 20;
constexpr int kZstdLevel = 3;  // zstd's default: fast, and JSON shrinks ~10x

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

LineSink::LineSink(const std::string& path)
    : name_(path == "-" ? "<stdout>" : path) {
  if (path == "-") {
    fd_ = 1;
  } else {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      throw TraceError(name_ + ": cannot open: " + std::strerror(errno));
    }
    own_fd_ = true;
  }
  if (ends_with(path, ".zst")) {
    cctx_ = ZSTD_createCCtx();
    if (!cctx_) throw TraceError(name_ + ": out of memory for zstd");
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, kZstdLevel);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1);
    out_.resize(ZSTD_CStreamOutSize());
  }
  pending_.reserve(kDrainAt + (kDrainAt >> 2));
}

LineSink::~LineSink() {
  if (cctx_) ZSTD_freeCCtx(cctx_);
  if (own_fd_ && fd_ >= 0) ::close(fd_);
}

void LineSink::write_all(const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd_, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw TraceError(name_ + ": write failed: " + std::strerror(errno));
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
}

void LineSink::drain(int zstd_mode) {
  if (!cctx_) {
    write_all(pending_.data(), pending_.size());
    pending_.clear();
    return;
  }
  const auto mode = static_cast<ZSTD_EndDirective>(zstd_mode);
  ZSTD_inBuffer in{pending_.data(), pending_.size(), 0};
  while (true) {
    ZSTD_outBuffer out{out_.data(), out_.size(), 0};
    const size_t left = ZSTD_compressStream2(cctx_, &out, &in, mode);
    if (ZSTD_isError(left)) {
      throw TraceError(name_ +
                       ": zstd compression failed: " + ZSTD_getErrorName(left));
    }
    write_all(out_.data(), out.pos);
    // e_continue is done once the input is taken; flush/end once zstd
    // reports nothing left to write.
    const bool done = mode == ZSTD_e_continue ? in.pos == in.size : left == 0;
    if (done) break;
  }
  pending_.clear();
}

void LineSink::wrote() {
  if (pending_.size() >= kDrainAt) drain(ZSTD_e_continue);
}

void LineSink::flush() {
  if (closed_) return;
  drain(ZSTD_e_flush);  // for plain output the mode is ignored
}

void LineSink::close() {
  if (closed_) return;
  closed_ = true;
  drain(ZSTD_e_end);
  if (own_fd_) {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) {
      throw TraceError(name_ + ": close failed: " + std::strerror(errno));
    }
  }
}

}  // namespace gd
