// The process section (process_columns.h) put back into decoded samples:
// whole processes for decode_block, or one sample's tree and GPU lists for
// a projected scan (projected_block.h), reusing the sample's storage.
#include <optional>
#include <span>

#include "store/process_columns.h"

namespace gd::store {
namespace {

template <typename T>
std::optional<T> value_of(const Cell& c) {
  if (!c.present) return std::nullopt;
  if constexpr (std::is_same_v<T, double>) {
    return c.as_double();
  } else {
    return static_cast<T>(c.is_double ? static_cast<int64_t>(c.d) : c.i);
  }
}

// Cell k of a column; a column with no values is empty (read_column).
Cell cell_at(const std::vector<Cell>& col, size_t k) {
  return k < col.size() ? col[k] : Cell{};
}

// Where an entry's listing in sample i is in its columns (`at` its
// positions, `next` its cursor). A process listed twice in one sample
// (corrupt input) repeats the same cells.
size_t listing(const std::vector<uint32_t>& at, size_t& next, size_t i) {
  const size_t k = next;
  if (k < at.size() && at[k] == i) {
    ++next;
    return k;
  }
  return k > 0 ? k - 1 : 0;
}

}  // namespace

ProcessApplier::ProcessApplier(const ProcessColumns& pc, size_t n)
    : pc_(pc), next_(pc.procs.size(), 0) {
  if (pc.lists.size() != n) throw CodecError("process lists out of step");
  gpu_next_.reserve(pc.gpus.size());
  for (const auto& gpu : pc.gpus) {
    if (gpu.lists.size() != n) throw CodecError("process lists out of step");
    gpu_next_.emplace_back(gpu.entries.size(), 0);
  }
}

void ProcessApplier::apply(size_t i, Sample& s) {
  auto& out = s.processes;
  const std::span<const uint32_t> list = pc_.lists[i];
  out.resize(list.size());
  for (size_t j = 0; j < list.size(); ++j) {
    const uint32_t e = list[j];
    const auto& proc = pc_.procs[e];
    ProcessSample& p = out[j];
    p = proc.statics;  // into p's strings: no allocation when they fit
    const size_t k = listing(proc.at, next_[e], i);
    if (k < proc.at.size()) {
      p.ppid = value_of<uint32_t>(cell_at(proc.ppid, k));
      if (auto st = value_of<uint64_t>(cell_at(proc.state, k)))
        p.state = proc.states.at(*st);
      p.cpu_pct = value_of<double>(cell_at(proc.cpu_pct, k));
      p.threads = value_of<int>(cell_at(proc.threads, k));
      p.rss_bytes = value_of<uint64_t>(cell_at(proc.rss, k));
      p.dev_shm_bytes = value_of<uint64_t>(cell_at(proc.dev_shm, k));
    }
  }
  for (size_t g = 0; g < pc_.gpus.size(); ++g) {
    const auto& gpu = pc_.gpus[g];
    GpuSample* gs = nullptr;
    for (auto& x : s.gpus)
      if (x.index == gpu.index) gs = &x;
    if (gs) apply_gpu_processes_at(gpu, i, gpu_next_[g], *gs, true);
  }
}

void apply_processes(const ProcessColumns& pc, std::vector<Sample>& samples) {
  ProcessApplier applier(pc, samples.size());
  for (size_t i = 0; i < samples.size(); ++i) applier.apply(i, samples[i]);
}

bool apply_process_tree_at(const ProcessColumns& pc, size_t i,
                           std::vector<size_t>& next, bool same_entries,
                           std::vector<ProcessSample>& out) {
  bool same = same_entries;
  const std::span<const uint32_t> list = pc.lists[i];
  out.resize(list.size());
  for (size_t j = 0; j < list.size(); ++j) {
    const uint32_t e = list[j];
    const auto& proc = pc.procs[e];
    ProcessSample& p = out[j];
    if (!same_entries) {
      const ProcessSample& from = proc.statics;
      p.pid = from.pid;
      p.user = from.user;
      p.name = from.name;
      p.cmdline = from.cmdline;
      p.cgroup = from.cgroup;
      p.start_time = from.start_time;
      p.ns_pid = from.ns_pid;
      p.slurm_job_id = from.slurm_job_id;
      p.pod = from.pod;
    }
    const size_t k = listing(proc.at, next[e], i);
    const std::optional<uint32_t> ppid =
        k < proc.at.size() ? value_of<uint32_t>(cell_at(proc.ppid, k))
                           : std::nullopt;
    if (ppid != p.ppid) {
      same = false;
      p.ppid = ppid;
    }
  }
  return same;
}

void apply_gpu_processes_at(const ProcessColumns::Gpu& gpu, size_t i,
                            std::vector<size_t>& next, GpuSample& gs,
                            bool all_columns) {
  if (!gpu.lists.listed(i)) {
    gs.processes.reset();
    return;
  }
  const std::span<const uint32_t> list = gpu.lists[i];
  if (!gs.processes) gs.processes.emplace();
  auto& out = *gs.processes;
  out.resize(list.size());
  for (size_t j = 0; j < out.size(); ++j) {
    const uint32_t e = list[j];
    const auto& entry = gpu.entries[e];
    GpuProcess& p = out[j];
    p.pid = entry.pid;
    p.type = entry.type;
    const size_t k = listing(entry.at, next[e], i);
    p.used_bytes = k < entry.used.size() ? value_of<uint64_t>(entry.used[k])
                                         : std::nullopt;
    p.sm_util_pct = k < entry.sm_util.size()
                        ? value_of<double>(entry.sm_util[k])
                        : std::nullopt;
    if (!all_columns) continue;
    p.mem_util_pct = k < entry.mem_util.size()
                         ? value_of<double>(entry.mem_util[k])
                         : std::nullopt;
    p.gi_id =
        k < entry.gi.size() ? value_of<uint32_t>(entry.gi[k]) : std::nullopt;
    p.ci_id =
        k < entry.ci.size() ? value_of<uint32_t>(entry.ci[k]) : std::nullopt;
  }
}

}  // namespace gd::store
