// The release bundle's glibc floor is 2.34 (scripts/package.sh,
// docs/install.md: Ubuntu 22.04, RHEL/Rocky 9). The binaries link GCC 12's
// libstdc++ statically (src/cli/CMakeLists.txt), and its std::random_device
// (random.o) calls arc4random, which glibc has only since 2.36: linked
// against glibc's, both binaries would ask for GLIBC_2.36 and not start on
// the floor. This definition is the one that call binds to instead: the
// same contract (32 cryptographically strong random bits, never fails),
// from getrandom(2) (glibc 2.25). basic_auth.cc does the same for libcrypt's
// arc4random_buf.
#include <cstdint>

#include "common/random_fill.h"

extern "C" uint32_t arc4random() noexcept {
  uint32_t value = 0;
  gd::random_fill(&value, sizeof value);
  return value;
}
