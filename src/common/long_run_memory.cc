#include "common/long_run_memory.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <charconv>
#include <string>

namespace gd {

void prefer_returning_memory() {
  // Setting the threshold also turns off its adjustment (mallopt(3)).
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  ::mallopt(M_ARENA_MAX, 1);
}

namespace {

bool parse_hex(std::string_view s, uintptr_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return ec == std::errc() && p == s.data() + s.size();
}

// "Anonymous:        4 kB" -> 4; a value that does not parse counts as
// written (not let go of).
uint64_t kib_of(std::string_view rest) {
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
  return ec == std::errc() && p != rest.data() ? v : UINT64_MAX;
}

// A mapping's header: "START-END PERMS OFFSET DEV INODE [PATH]".
bool parse_header(std::string_view line, CodeMapping& m, bool& code) {
  size_t dash = line.find('-');
  size_t sp = line.find(' ');
  if (dash == std::string_view::npos || sp == std::string_view::npos ||
      dash > sp)
    return false;
  if (!parse_hex(line.substr(0, dash), m.start) ||
      !parse_hex(line.substr(dash + 1, sp - dash - 1), m.end) ||
      m.end <= m.start)
    return false;
  std::string_view rest = line.substr(sp + 1);
  code = rest.substr(0, 5) == "r-xp ";
  // The path is the first field starting with '/' after the five fixed
  // ones; "[vdso]" and anonymous code are not a file's.
  size_t slash = rest.find(" /");
  code = code && slash != std::string_view::npos;
  return true;
}

}  // namespace

std::vector<CodeMapping> clean_code_mappings(std::string_view smaps) {
  std::vector<CodeMapping> out;
  CodeMapping cur;
  // `clean`: the mapping's Anonymous field was read and is 0. A page the
  // process wrote (copied on write) is anonymous; Private_Dirty is no
  // guide, as it also counts pages of a file written but not yet on disk (a
  // binary just built).
  bool code = false, clean = false;
  auto close = [&] {
    if (code && clean) out.push_back(cur);
    code = false;
  };
  while (!smaps.empty()) {
    size_t nl = smaps.find('\n');
    std::string_view line = smaps.substr(0, nl);
    smaps.remove_prefix(nl == std::string_view::npos ? smaps.size() : nl + 1);
    // A field line starts with its name and a colon; a header with a
    // hexadecimal range.
    size_t colon = line.find(':');
    size_t sp = line.find(' ');
    if (colon != std::string_view::npos &&
        (sp == std::string_view::npos || colon < sp)) {
      if (code && line.substr(0, colon) == "Anonymous")
        clean = kib_of(line.substr(colon + 1)) == 0;
      continue;
    }
    CodeMapping m;
    bool is_code = false;
    if (parse_header(line, m, is_code)) {
      close();
      cur = m;
      code = is_code;
      clean = false;  // until its Anonymous field says 0
    }
  }
  close();
  return out;
}

size_t drop_code_pages() {
  // smaps of a process with a driver loaded is ~100 KB; a bound keeps a
  // strange one from growing without end.
  constexpr size_t kMaxBytes = 8 << 20;
  int fd = ::open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::string text;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0 || text.size() + static_cast<size_t>(n) > kMaxBytes) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  size_t bytes = 0;
  for (const CodeMapping& m : clean_code_mappings(text)) {
    if (::madvise(reinterpret_cast<void*>(m.start), m.end - m.start,
                  MADV_DONTNEED) == 0)
      bytes += m.end - m.start;
  }
  return bytes;
}

}  // namespace gd
