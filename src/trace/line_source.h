// Reads a trace file line by line, plain or zstd-compressed (recognised by
// the zstd magic number, whatever the file is called). The bytes are read
// (and decompressed) a few chunks ahead on a thread of its own
// (chunk_reader.h); only the current chunk and the line that crosses into it
// are held, so a day-long trace is never loaded whole.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "trace/chunk_reader.h"

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

  // Only spaces, tabs and CRs: a line readers skip.
  static bool is_blank(std::string_view line) {
    return line.find_first_not_of(" \t\r") == std::string_view::npos;
  }

  const std::string& name() const { return name_; }  // for messages
  size_t line_number() const { return line_number_; }
  bool compressed() const { return compressed_; }

  static constexpr size_t kPadding = ChunkReader::kPadding;
  static_assert(kPadding >= 64);  // >= simdjson::SIMDJSON_PADDING
  static constexpr size_t kMaxLine = size_t{64} << 20;

 private:
  // Brings the next chunk in behind the unfinished line; false at the end.
  bool refill();
  [[noreturn]] void throw_end() const;

  std::string name_;
  int fd_ = -1;
  bool own_fd_ = false;
  bool compressed_ = false;
  size_t line_number_ = 0;

  // buf_ is a chunk buffer of the reader's (recycled when done) or, while a
  // line is longer than a chunk's headroom, a larger one of our own.
  std::unique_ptr<char[]> buf_;
  bool buf_is_chunk_ = false;
  size_t cap_ = 0;    // usable bytes of buf_ (kPadding more are allocated)
  size_t begin_ = 0;  // start of the unread data
  size_t scan_ = 0;   // no '\n' in [begin_, scan_)
  size_t end_ = 0;    // end of data
  bool eof_ = false;

  std::unique_ptr<ChunkReader> reader_;  // last: its thread reads fd_
};

}  // namespace gd
