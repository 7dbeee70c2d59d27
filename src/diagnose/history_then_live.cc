#include "diagnose/history_then_live.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gd {
namespace {

void count(WindowPart& part, double t) {
  if (part.samples++ == 0) part.start = t;
  part.end = t;
}

}  // namespace

HistoryThenLiveSource::HistoryThenLiveSource(const std::string& history,
                                             SampleSource& live)
    : live_(live) {
  // The trace reader reads files (plain or zstd, on a thread of its own); an
  // anonymous in-memory file gives it the bytes without touching a disk.
  fd_ = ::memfd_create("gpudoctor-serve-history", MFD_CLOEXEC);
  if (fd_ < 0)
    throw TraceError(std::string("serve history: memfd_create: ") +
                     std::strerror(errno));
  for (size_t done = 0; done < history.size();) {
    ssize_t n = ::write(fd_, history.data() + done, history.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd_);
      throw TraceError("serve history: cannot hold it in memory");
    }
    done += static_cast<size_t>(n);
  }
  try {
    history_ = std::make_unique<TraceReader>(
        "/proc/self/fd/" + std::to_string(fd_), TraceReader::Options{});
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

HistoryThenLiveSource::~HistoryThenLiveSource() {
  history_.reset();
  if (fd_ >= 0) ::close(fd_);
}

bool HistoryThenLiveSource::next(Sample& out) {
  while (history_) {
    bool more = false;
    try {
      more = history_->next(out);
    } catch (const TraceError& e) {
      history_error_ = e.what();
    }
    if (!more) {
      history_.reset();
      break;
    }
    // Time goes forward in a window: a sample at or before the last one
    // (a clock step on the node) is left out rather than confuse the rules.
    if (from_history_.samples > 0 && out.t <= from_history_.end) continue;
    count(from_history_, out.t);
    return true;
  }
  while (live_.next(out)) {
    double last = from_live_.samples      ? from_live_.end
                  : from_history_.samples ? from_history_.end
                                          : -1;
    if (out.t <= last) continue;
    count(from_live_, out.t);
    return true;
  }
  return false;
}

std::vector<WindowPart> HistoryThenLiveSource::parts(
    const std::string& url) const {
  WindowPart history = from_history_;
  history.url = url;
  return {history, from_live_};
}

}  // namespace gd
