#include "procfs/kept_file.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <string>
#include <string_view>

namespace gd::procfs {

namespace {

constexpr long kProcSuperMagic = 0x9fa0;  // PROC_SUPER_MAGIC, linux/magic.h

std::atomic<size_t> g_kept{0};

bool on_procfs(int fd) {
  struct statfs fs {};
  return fstatfs(fd, &fs) == 0 && fs.f_type == kProcSuperMagic;
}

// What `path` names below its first all-digit component ("/proc" for
// "/proc/123/stat"); empty when it has none (a host file: "/proc/stat").
std::string_view root_above_pid(std::string_view path) {
  size_t at = 0;
  while ((at = path.find('/', at)) != std::string_view::npos) {
    size_t end = path.find('/', at + 1);
    if (end == std::string_view::npos) return {};
    std::string_view part = path.substr(at + 1, end - at - 1);
    if (!part.empty() &&
        part.find_first_not_of("0123456789") == std::string_view::npos)
      return path.substr(0, at);
    at = end;
  }
  return {};
}

// Whether a process's file is on procfs: asked of the kernel (fstatfs)
// once per root and thread (every process's files of one root are on one
// mount); a scan of every process's stat paid for one per process.
bool pid_file_on_procfs(const char* path, int fd) {
  thread_local std::string known_root;
  thread_local bool known_on_procfs = false;
  const std::string_view root = root_above_pid(path);
  if (root.empty()) return on_procfs(fd);
  if (root != known_root) {
    known_root.assign(root);
    known_on_procfs = on_procfs(fd);
  }
  return known_on_procfs;
}

}  // namespace

KeptFile& KeptFile::operator=(KeptFile&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void KeptFile::close() {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  g_kept.fetch_sub(1, std::memory_order_relaxed);
}

bool KeptFile::read(const char* path, std::string& out, Ending ending) {
  out.clear();
  if (fd_ >= 0) {
    if (read_from_start(fd_, out, ending)) return true;
    close();  // ESRCH: the process it pinned is gone
    out.clear();
    return false;
  }
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = read_from_start(fd, out, ending);
  if (ok && g_kept.load(std::memory_order_relaxed) < kept_file_budget() &&
      pid_file_on_procfs(path, fd)) {
    fd_ = fd;
    g_kept.fetch_add(1, std::memory_order_relaxed);
  } else {
    ::close(fd);
  }
  return ok;
}

bool take_kept_slot() {
  if (g_kept.load(std::memory_order_relaxed) >= kept_file_budget())
    return false;
  g_kept.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void give_kept_slot() { g_kept.fetch_sub(1, std::memory_order_relaxed); }

size_t kept_file_count() { return g_kept.load(std::memory_order_relaxed); }

size_t kept_file_budget() {
  // Read once: after raise_open_files_limit() when main() calls it first.
  static const size_t budget = [] {
    rlimit lim{};
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
      return size_t{512};
    return static_cast<size_t>(lim.rlim_cur / 2);
  }();
  return budget;
}

void raise_open_files_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= lim.rlim_max)
    return;
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);
}

void reserve_descriptor_table() {
  const size_t want = std::min(kept_file_budget(), kReservedDescriptors);
  if (want < 2) return;
  // A copy of any open descriptor at the highest number wanted, closed at
  // once; stdin, stdout and stderr may each have been closed by a parent.
  for (int from : {2, 1, 0}) {
    const int fd = fcntl(from, F_DUPFD_CLOEXEC, static_cast<int>(want - 1));
    if (fd >= 0) {
      ::close(fd);
      return;
    }
    if (errno != EBADF) return;
  }
}

}  // namespace gd::procfs
