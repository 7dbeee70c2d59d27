#include "common/long_run_memory.h"

#include <malloc.h>

namespace gd {

void prefer_returning_memory() {
  // Setting the threshold also turns off its adjustment (mallopt(3)).
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  ::mallopt(M_ARENA_MAX, 1);
}

}  // namespace gd
