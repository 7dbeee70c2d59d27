// KernelLogSource: non-blocking follower of /dev/kmsg or of a plain file.
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/text_cap.h"
#include "kernellog/kernel_log.h"
#include "kernellog/log_line_prefix.h"

namespace gd {

namespace {
// A /dev/kmsg record is at most a few KiB (PRINTKRB_RECORD_MAX 1024 bytes of
// text plus dictionary on current kernels, 8 KiB on old ones); read() with a
// buffer that is too small fails with EINVAL without consuming the record.
constexpr size_t kReadBuffer = 64 * 1024;

// The wall-clock time of boot as the kernel's log stamps count it: their
// clock is the monotonic one (no suspend), as `dmesg -T` assumes too.
double boot_wall_time() {
  timespec real{}, mono{};
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  return static_cast<double>(real.tv_sec - mono.tv_sec) +
         static_cast<double>(real.tv_nsec - mono.tv_nsec) * 1e-9;
}
}  // namespace

struct KernelLogSource::Impl {
  std::string path;
  int fd = -1;
  bool is_kmsg = false;  // a character device: one record per read()
  std::string error;
  off_t offset = 0;     // plain file: next byte to read
  ino_t inode = 0;      // plain file: to notice rotation
  std::string partial;  // plain file: text after the last newline, capped
  size_t partial_left_out = 0;  // bytes of that line past kKernelLineMax
  std::string buf = std::string(kReadBuffer, '\0');
  KernelLogClassifier classifier;
  uint64_t unclassified = 0;
  std::optional<double> skip_before;  // seconds after boot
  double boot_time = boot_wall_time();

  // One line of the log; `left_out` bytes of it were cut off.
  void take(std::string_view line, size_t left_out, const PciIndex& pci,
            std::vector<Event>& out) {
    // The stamp is read only where it is used: most lines are no event.
    std::optional<double> at;
    if (skip_before) {
      at = kernellog::line_uptime_s(line);
      if (at && *at < *skip_before) return;
    }
    auto r = classifier.classify(line, pci);
    if (!r.classified) ++unclassified;
    if (!r.event) return;
    if (!skip_before) at = kernellog::line_uptime_s(line);
    if (at) r.event->logged_at = boot_time + *at;
    if (left_out) cap_text(r.event->text, kKernelLineMax, left_out);
    out.push_back(std::move(*r.event));
  }

  bool open_file(bool from_start) {
    fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      int err = errno;
      error = "cannot open " + path + ": " + std::strerror(err);
      if (err == EPERM || err == EACCES)
        error +=
            " (reading the kernel log needs root or CAP_SYSLOG when "
            "kernel.dmesg_restrict=1)";
      return false;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0) {
      error = "cannot stat " + path + ": " + std::strerror(errno);
      ::close(fd);
      fd = -1;
      return false;
    }
    is_kmsg = S_ISCHR(st.st_mode);
    inode = st.st_ino;
    offset = 0;
    partial.clear();
    partial_left_out = 0;
    if (!from_start) {
      // On /dev/kmsg SEEK_END positions after the newest record (SEEK_DATA
      // would mean "after the last `dmesg -c` clear", not what we want).
      off_t end = lseek(fd, 0, SEEK_END);
      if (!is_kmsg && end > 0) offset = end;
    }
    return true;
  }

  void poll_kmsg(const PciIndex& pci, std::vector<Event>& out) {
    for (;;) {
      ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n > 0) {
        // "PRI,SEQ,USEC,FLAGS;message\n KEY=VALUE\n...": keep the first line.
        std::string_view rec(buf.data(), static_cast<size_t>(n));
        rec = rec.substr(0, rec.find('\n'));
        take(rec, 0, pci, out);
        continue;
      }
      if (n == 0) return;
      if (errno == EINTR) continue;
      // EPIPE: records were overwritten before we read them; the next read
      // continues with the oldest record still there.
      if (errno == EPIPE) continue;
      return;  // EAGAIN: nothing more for now; anything else: try next poll
    }
  }

  void poll_file(const PciIndex& pci, std::vector<Event>& out) {
    struct stat st {};
    if (fstat(fd, &st) == 0 && st.st_size < offset) {  // truncated
      offset = 0;
      partial.clear();
      partial_left_out = 0;
    }
    drain_file(pci, out);
    // Rotated (path now names another file): finish the old one, then
    // follow the new one from its start, like `tail -F`.
    struct stat now {};
    if (::stat(path.c_str(), &now) == 0 && now.st_ino != inode) {
      ::close(fd);
      fd = -1;
      if (open_file(true)) drain_file(pci, out);
    }
  }

  void drain_file(const PciIndex& pci, std::vector<Event>& out) {
    for (;;) {
      ssize_t n = ::pread(fd, buf.data(), buf.size(), offset);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      offset += n;
      append_lines(std::string_view(buf.data(), static_cast<size_t>(n)), pci,
                   out);
    }
  }

  // Splits `in` into lines, the first continuing `partial`; keeps an
  // unfinished last line for next time. A line (a file with no newline at
  // all, say) is kept to kKernelLineMax bytes: the rest is only counted.
  void append_lines(std::string_view in, const PciIndex& pci,
                    std::vector<Event>& out) {
    while (!in.empty()) {
      size_t nl = in.find('\n');
      std::string_view piece = in.substr(0, nl);
      size_t room =
          partial.size() < kKernelLineMax ? kKernelLineMax - partial.size() : 0;
      partial.append(piece.substr(0, room));
      partial_left_out += piece.size() - std::min(room, piece.size());
      if (nl == std::string_view::npos) return;
      take(partial, partial_left_out, pci, out);
      partial.clear();
      partial_left_out = 0;
      in.remove_prefix(nl + 1);
    }
  }
};

KernelLogSource::KernelLogSource(std::string path, bool from_start)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = std::move(path);
  impl_->open_file(from_start);
}

KernelLogSource::~KernelLogSource() {
  if (impl_ && impl_->fd >= 0) ::close(impl_->fd);
}

bool KernelLogSource::ok() const { return impl_->fd >= 0; }

const std::string& KernelLogSource::error() const { return impl_->error; }

void KernelLogSource::skip_before_uptime(double uptime_s) {
  impl_->skip_before = uptime_s;
}

uint64_t KernelLogSource::unclassified_total() const {
  return impl_->unclassified;
}

std::vector<Event> KernelLogSource::poll(const PciIndex& pci) {
  std::vector<Event> out;
  if (impl_->fd < 0) return out;
  if (impl_->is_kmsg)
    impl_->poll_kmsg(pci, out);
  else
    impl_->poll_file(pci, out);
  return out;
}

}  // namespace gd
