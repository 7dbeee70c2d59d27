// Cryptographically strong random bytes from getrandom(2) (glibc 2.25),
// never failing: what arc4random and arc4random_buf promise. The release
// bundle's glibc floor (2.34) has neither, so the binaries define them over
// this (src/cli/glibc_floor.cc for libstdc++'s random_device,
// src/serve/basic_auth.cc for libcrypt's salts). Inline: each definition
// must sit in the object that the linker takes, not behind an archive.
#pragma once

#include <sys/random.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>

namespace gd {

inline void random_fill(void* buf, size_t n) noexcept {
  auto* p = static_cast<unsigned char*>(buf);
  while (n > 0) {
    const ssize_t got = getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      std::abort();  // neither arc4random function can report an error
    }
    p += got;
    n -= static_cast<size_t>(got);
  }
}

}  // namespace gd
