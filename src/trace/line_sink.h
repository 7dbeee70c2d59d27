// Writes trace lines to a file or stdout, zstd-compressed when the path ends
// in ".zst". Lines are collected in memory and only whole lines are handed to
// the kernel, so a process killed between flushes leaves a file whose every
// line is complete (plain), or whose flushed part decompresses (zstd).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

struct ZSTD_CCtx_s;

namespace gd {

class LineSink {
 public:
  // path "-" = stdout. Throws TraceError("PATH: cannot open: <strerror>").
  explicit LineSink(const std::string& path);
  ~LineSink();  // does not flush: call close()
  LineSink(const LineSink&) = delete;
  LineSink& operator=(const LineSink&) = delete;

  // Append complete lines (with their '\n') here, then call wrote().
  std::string& buffer() { return pending_; }
  void wrote();  // hands the buffer on once it is large

  // Everything so far reaches the file: a reader sees every line.
  void flush();
  // Ends the zstd frame and closes the file. Idempotent.
  void close();

  const std::string& name() const { return name_; }
  bool closed() const { return closed_; }

 private:
  void drain(int zstd_mode);  // writes out pending_ (and compresses it)
  void write_all(const char* data, size_t n);

  std::string name_;
  int fd_ = -1;
  bool own_fd_ = false;
  bool closed_ = false;
  std::string pending_;
  ZSTD_CCtx_s* cctx_ = nullptr;
  std::vector<char> out_;
};

}  // namespace gd
