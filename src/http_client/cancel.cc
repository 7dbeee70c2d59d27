#include "http_client/cancel.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gd::http {

RequestCancel::~RequestCancel() { release(); }

void RequestCancel::cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

bool RequestCancel::cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

void RequestCancel::adopt(int fd) {
  std::lock_guard lock(mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  // Shut down before connect: the connect fails at once.
  if (cancelled_ && fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

void RequestCancel::shut_down() {
  std::lock_guard lock(mu_);
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

void RequestCancel::release() {
  std::lock_guard lock(mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace gd::http
