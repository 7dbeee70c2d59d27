#include "procfs/text_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>

namespace gd::procfs {

namespace {
// "4194304 ": pid_max is at most 2^22, plus the separator; with margin.
constexpr size_t kLongestPidRecord = 16;
// procfs's smallest seq_file buffer: one page.
constexpr size_t kSeqBufferBytes = 4096;
}  // namespace

bool read_from_start(int fd, std::string& out, Ending ending) {
  // /proc files report size 0, so read in chunks until the end. Chunks go
  // through a stack buffer and are appended: growing `out` with resize()
  // would zero-fill its whole capacity on every call, which once dominated
  // the cost of a sample (a big /proc/PID/maps leaves a large capacity).
  char chunk[16384];
  off_t off = 0;
  for (;;) {
    ssize_t n = ::pread(fd, chunk, sizeof chunk, off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) return true;
    size_t got = static_cast<size_t>(n);
    out.append(chunk, got);
    if (ending == Ending::kShortRead && got < sizeof chunk) return true;
    if (ending == Ending::kShortPidList &&
        got + kLongestPidRecord <= kSeqBufferBytes)
      return true;
    off += n;
  }
}

bool read_file(const char* path, std::string& out, Ending ending) {
  out.clear();
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = read_from_start(fd, out, ending);
  ::close(fd);
  return ok;
}

bool read_file_head(const char* path, std::string& out, size_t max_bytes) {
  out.clear();
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // The buffer grows as the file turns out longer: most are a few hundred
  // bytes, and making room for all of max_bytes up front (128 KiB for an
  // environ) cost a zero fill of it per process, more than the read.
  out.resize(std::min<size_t>(max_bytes, 4096));
  size_t got = 0;
  bool ok = true;
  while (got < max_bytes) {
    if (got == out.size()) out.resize(std::min(max_bytes, 2 * out.size()));
    ssize_t n = ::pread(fd, out.data() + got, out.size() - got,
                        static_cast<off_t>(got));
    if (n < 0) {
      if (errno == EINTR) continue;
      ok = false;
      break;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return ok;
}

bool read_file_prefix(const char* path, std::string& out, size_t max_bytes,
                      size_t& left_out) {
  out.clear();
  left_out = 0;
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char chunk[16384];
  off_t off = 0;
  bool ok = true;
  for (;;) {
    ssize_t n = ::pread(fd, chunk, sizeof chunk, off);
    if (n < 0) {
      if (errno == EINTR) continue;
      ok = false;
      break;
    }
    if (n == 0) break;
    size_t got = static_cast<size_t>(n);
    size_t keep =
        out.size() < max_bytes ? std::min(got, max_bytes - out.size()) : 0;
    out.append(chunk, keep);
    left_out += got - keep;
    off += n;
  }
  ::close(fd);
  return ok;
}

bool next_line(std::string_view& text, std::string_view& line) {
  if (text.empty()) return false;
  size_t nl = text.find('\n');
  if (nl == std::string_view::npos) {
    line = text;
    text = {};
  } else {
    line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
  }
  return true;
}

static bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view next_field(std::string_view& text) {
  size_t i = 0;
  while (i < text.size() && is_blank(text[i])) ++i;
  size_t start = i;
  while (i < text.size() && !is_blank(text[i])) ++i;
  std::string_view field = text.substr(start, i - start);
  text.remove_prefix(i);
  return field;
}

std::optional<uint64_t> parse_u64(std::string_view s) {
  uint64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> parse_i64(std::string_view s) {
  int64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_double(std::string_view s) {
  double v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  // from_chars also reads "inf", "nan" and "-1": no /proc value is one.
  if (!std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

std::optional<std::string_view> value_after_key(std::string_view line,
                                                std::string_view key) {
  if (line.size() <= key.size() || line.compare(0, key.size(), key) != 0 ||
      line[key.size()] != ':')
    return std::nullopt;
  return line.substr(key.size() + 1);
}

std::optional<uint32_t> pid_of_entry(const char* name) {
  if (name[0] < '1' || name[0] > '9') return std::nullopt;
  auto v = parse_u64(name);
  if (!v || *v > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

}  // namespace gd::procfs
