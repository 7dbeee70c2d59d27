#include "procfs/kept_file.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <atomic>

namespace gd::procfs {

namespace {

constexpr long kProcSuperMagic = 0x9fa0;  // PROC_SUPER_MAGIC, linux/magic.h

std::atomic<size_t> g_kept{0};

bool on_procfs(int fd) {
  struct statfs fs {};
  return fstatfs(fd, &fs) == 0 && fs.f_type == kProcSuperMagic;
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
      on_procfs(fd)) {
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

}  // namespace gd::procfs
