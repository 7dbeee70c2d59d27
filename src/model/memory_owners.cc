#include "model/memory_owners.h"

#include "model/process_tree.h"

namespace gd {

void MemoryOwnersSum::add(std::optional<uint64_t> used_bytes, bool dead) {
  if (dead)
    ++m_.dead_processes;
  else if (used_bytes)
    m_.live_bytes += *used_bytes;
  else
    m_.live_sizes_known = false;
}

MemoryOwners MemoryOwnersSum::finish(
    std::optional<uint64_t> mem_used_bytes) const {
  MemoryOwners m = m_;
  if (mem_used_bytes && m.live_sizes_known)
    m.not_owned_bytes =
        *mem_used_bytes > m.live_bytes ? *mem_used_bytes - m.live_bytes : 0;
  return m;
}

MemoryOwners memory_owners(const GpuSample& g, const ProcessTree& tree) {
  if (!g.processes) return {};
  MemoryOwnersSum sum;
  for (const GpuProcess& gp : *g.processes) {
    const ProcessSample* p = tree.find(gp.pid);
    sum.add(gp.used_bytes, p && is_dead_state(p->state));
  }
  return sum.finish(g.mem_used_bytes);
}

}  // namespace gd
