#include "serve/trace_download.h"

#include <spdlog/spdlog.h>
#include <zstd.h>

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
      buffer_(max_buffered) {}

TraceDownload::~TraceDownload() {
  cancel();
  if (thread_.joinable()) thread_.join();
}

void TraceDownload::start() {
  thread_ = std::thread([this] { produce(); });
}

void TraceDownload::produce() {
  ZSTD_CCtx* cctx = zstd_ ? ZSTD_createCCtx() : nullptr;
  if (cctx) ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, kZstdLevel);
  std::string line, out(ZSTD_CStreamOutSize(), '\0');
  // Compresses `line` (or, with `end`, finishes the frame) into put().
  auto emit = [&](bool end) {
    if (!cctx) return buffer_.put(line);
    ZSTD_inBuffer in{line.data(), line.size(), 0};
    for (;;) {
      ZSTD_outBuffer o{out.data(), out.size(), 0};
      const size_t left = ZSTD_compressStream2(
          cctx, &o, &in, end ? ZSTD_e_end : ZSTD_e_continue);
      if (ZSTD_isError(left))
        throw std::runtime_error(std::string("zstd: ") +
                                 ZSTD_getErrorName(left));
      if (!buffer_.put(std::string_view(out.data(), o.pos))) return false;
      if (end ? left == 0 : in.pos == in.size) return true;
    }
  };
  bool ok = true, failed = false;
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
    failed = true;
  }
  if (cctx) ZSTD_freeCCtx(cctx);
  buffer_.finish(failed);
}

}  // namespace gd
