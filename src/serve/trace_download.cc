#include "serve/trace_download.h"

#include <spdlog/spdlog.h>
#include <zstd.h>

#include <cstring>

#include "serve/log.h"
#include "store/history_store.h"
#include "trace/trace_io.h"

namespace gd {
namespace {

// zstd's default level: ~25x on traces at hundreds of MB/s, so a day of 8
// GPUs (~800 MB of JSON) downloads as ~35 MB without making serve busy.
constexpr int kZstdLevel = 3;

}  // namespace

TraceDownload::TraceDownload(const History& history, double since, double until,
                             bool zstd, size_t max_buffered)
    : history_(history),
      since_(since),
      until_(until),
      zstd_(zstd),
      max_buffered_(max_buffered) {}

TraceDownload::~TraceDownload() {
  cancel();
  if (thread_.joinable()) thread_.join();
}

void TraceDownload::set_hooks(std::function<void()> suspend,
                              std::function<void()> resume) {
  std::lock_guard lock(mu_);
  suspend_ = std::move(suspend);
  resume_ = std::move(resume);
}

void TraceDownload::start() {
  thread_ = std::thread([this] { produce(); });
}

TraceDownload::Read TraceDownload::read(char* buf, size_t max, size_t& n) {
  std::lock_guard lock(mu_);
  n = std::min(max, buffer_.size() - offset_);
  if (n > 0) {
    std::memcpy(buf, buffer_.data() + offset_, n);
    offset_ += n;
    if (offset_ == buffer_.size()) {
      buffer_.clear();
      offset_ = 0;
    }
    room_.notify_all();
    return Read::kData;
  }
  if (failed_ || cancelled_) return Read::kError;
  if (done_) return Read::kEnd;
  if (suspend_) {
    suspend_();
    suspended_ = true;
  }
  return Read::kWait;
}

void TraceDownload::cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  suspend_ = nullptr;
  resume_ = nullptr;
  room_.notify_all();
}

void TraceDownload::abort() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  room_.notify_all();
  if (suspended_ && resume_) {
    suspended_ = false;
    resume_();
  }
}

bool TraceDownload::finished() const {
  std::lock_guard lock(mu_);
  return done_ || failed_ || cancelled_;
}

bool TraceDownload::put(std::string_view bytes) {
  std::unique_lock lock(mu_);
  while (!bytes.empty()) {
    room_.wait(lock, [&] {
      return cancelled_ || buffer_.size() - offset_ < max_buffered_;
    });
    if (cancelled_) return false;
    const size_t take =
        std::min(bytes.size(), max_buffered_ - (buffer_.size() - offset_));
    buffer_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
    if (suspended_ && resume_) {
      suspended_ = false;
      resume_();
    }
  }
  return true;
}

void TraceDownload::produce() {
  ZSTD_CCtx* cctx = zstd_ ? ZSTD_createCCtx() : nullptr;
  if (cctx) ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, kZstdLevel);
  std::string line, out(ZSTD_CStreamOutSize(), '\0');
  // Compresses `line` (or, with `end`, finishes the frame) into put().
  auto emit = [&](bool end) {
    if (!cctx) return put(line);
    ZSTD_inBuffer in{line.data(), line.size(), 0};
    for (;;) {
      ZSTD_outBuffer o{out.data(), out.size(), 0};
      const size_t left = ZSTD_compressStream2(
          cctx, &o, &in, end ? ZSTD_e_end : ZSTD_e_continue);
      if (ZSTD_isError(left))
        throw std::runtime_error(std::string("zstd: ") +
                                 ZSTD_getErrorName(left));
      if (!put(std::string_view(out.data(), o.pos))) return false;
      if (end ? left == 0 : in.pos == in.size) return true;
    }
  };
  bool ok = true;
  try {
    append_header_json(line, history_.header());
    line += '\n';
    ok = emit(false);
    if (ok) {
      ReadReport report;
      history_.scan(
          since_, until_,
          [&](const Sample& s) {
            line.clear();
            append_sample_json(line, s);
            line += '\n';
            ok = emit(false);
            return ok;
          },
          &report);
      if (report.skipped_blocks > 0)
        spdlog::warn(
            "msg=\"trace download skipped corrupt blocks\" skipped_blocks={} "
            "hint=\"gpudoctor db check\"",
            report.skipped_blocks);
    }
    line.clear();
    if (ok) ok = emit(true);
  } catch (const std::exception& e) {
    spdlog::error("msg=\"trace download failed\" error={}",
                  serve_log::q(e.what()));
    std::lock_guard lock(mu_);
    failed_ = true;
  }
  if (cctx) ZSTD_freeCCtx(cctx);
  std::lock_guard lock(mu_);
  done_ = true;
  if (suspended_ && resume_) {
    suspended_ = false;
    resume_();
  }
}

}  // namespace gd
