// Reads a trace file line by line, plain or zstd-compressed (recognised by
// the zstd magic number, whatever the file is called). Holds only the current
// line plus one read chunk, so a day-long trace is never loaded whole.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct ZSTD_DCtx_s;

namespace gd {

class LineSource {
 public:
  // path "-" = stdin. Throws TraceError("PATH: cannot open: <strerror>").
  explicit LineSource(const std::string& path);
  ~LineSource();
  LineSource(const LineSource&) = delete;
  LineSource& operator=(const LineSource&) = delete;

  // The next line without its '\n'; false at end of input. At least
  // kPadding readable bytes follow the line (simdjson reads past the end).
  // The view is valid until the next call. Throws TraceError on read errors,
  // corrupt or truncated zstd data, or an absurdly long line.
  bool next(std::string_view& line);

  const std::string& name() const { return name_; }  // for messages
  size_t line_number() const { return line_number_; }
  bool compressed() const { return dctx_ != nullptr; }

  static constexpr size_t kPadding = 64;  // >= simdjson::SIMDJSON_PADDING
  static constexpr size_t kMaxLine = size_t{64} << 20;

 private:
  size_t fill();  // appends input at end_; returns bytes added, 0 at EOF
  size_t read_some(char* dst, size_t n);
  size_t decompress_some(char* dst, size_t n);
  void grow();

  std::string name_;
  int fd_ = -1;
  bool own_fd_ = false;
  size_t line_number_ = 0;

  std::unique_ptr<char[]> buf_;  // capacity cap_ + kPadding
  size_t cap_ = 0;
  size_t begin_ = 0;  // start of the unread data
  size_t scan_ = 0;   // no '\n' in [begin_, scan_)
  size_t end_ = 0;    // end of data
  bool eof_ = false;

  // zstd input
  ZSTD_DCtx_s* dctx_ = nullptr;
  std::vector<char> in_;
  size_t in_pos_ = 0, in_len_ = 0;
  bool in_eof_ = false;
  bool frame_open_ = false;  // inside a zstd frame not yet finished
};

}  // namespace gd
