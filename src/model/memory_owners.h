// The one figure for "GPU memory no live process holds", used by the
// orphaned-memory finding, `who`, top's memory bar and the dashboard so that
// they all give the same number: the GPU's used memory minus what its live
// listed processes hold. A listed process is dead when its processes[]
// entry is a zombie or "missing"; a pid without an entry is of unknown
// liveness and counted as live. A dead process's size does not matter (its
// memory is not held by a live one either way); a live one's does: when
// NVML gives no size for it, the figure is unknown.
#pragma once

#include <cstdint>
#include <optional>

#include "model/sample.h"

namespace gd {

class ProcessTree;

struct MemoryOwners {
  uint64_t live_bytes = 0;  // known sizes of the live listed processes
  bool live_sizes_known = true;
  int dead_processes = 0;  // listed, zombie or missing
  // used - live_bytes (0 when live exceeds used); unset when used, the
  // process list or a live process's size is unknown.
  std::optional<uint64_t> not_owned_bytes;
};

MemoryOwners memory_owners(const GpuSample& g, const ProcessTree& tree);

// The same sum over processes whose liveness the caller judged (who reads
// it from /proc): add each listed process, then finish with used.
class MemoryOwnersSum {
 public:
  void add(std::optional<uint64_t> used_bytes, bool dead);
  MemoryOwners finish(std::optional<uint64_t> mem_used_bytes) const;

 private:
  MemoryOwners m_;
};

}  // namespace gd
