// The process table of `top`: GPU processes (one row per GPU they are
// listed on) with their data-loader workers, filtered and sorted as the
// user chose. In the folded view (the default) a GPU process's row counts
// its workers and its CPU% includes theirs; the tree view shows each worker
// on its own row under it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/sample.h"
#include "views/top/state.h"

namespace gd {
class ProcessTree;
}

namespace gd::top {

struct ProcRow {
  RowKey key;
  int depth = 0;              // 0: GPU process; 1..: worker depth (tree view)
  bool last_sibling = false;  // tree glyph: the last child of its parent
  const ProcessSample* proc = nullptr;  // null: NVML lists it, /proc not
  std::optional<uint64_t> gpu_mem;      // GPU processes only
  // GPU processes only: NVML's per-process SM utilisation on this GPU
  // (unset where the driver does not sample it).
  std::optional<double> sm_pct;
  std::optional<double> cpu_pct;  // folded: with its workers
  size_t workers = 0;             // folded: descendants counted in
  bool missing = false;           // NVML lists it, no process has the pid
  bool zombie = false;
  bool other_ns = false;  // lives in a nested PID namespace (a container)
  // The GPU process a worker belongs to (== key.pid for a GPU process).
  uint32_t owner = 0;
};

// Rows of `s` as `st` asks (filters, sort, tree). Pointers point into `s`.
// `tree`: the ProcessTree of `s` when the caller keeps one (null: built
// here).
std::vector<ProcRow> build_rows(const Sample& s, const TopState& st,
                                const ProcessTree* tree = nullptr);

// Sort value helpers, also used by the table's cells.
std::string row_user(const ProcRow& r);
std::string row_command(const ProcRow& r);
std::string row_container(const ProcRow& r);
std::string row_state(const ProcRow& r);  // "R", "Z", "gone"...
std::optional<double> row_elapsed(const ProcRow& r, double now);

// One GPU's memory as the bar shows it.
struct MemorySplit {
  std::optional<uint64_t> used, total;
  // Memory no live process holds (used minus the live listed processes:
  // model/memory_owners.h, the figure of the orphaned-memory finding, who
  // and the dashboard); 0 when unknown.
  uint64_t orphaned = 0;
};
// `tree`: the ProcessTree of `s` when the caller keeps one (null: built
// here; a frame of 8 GPUs and 500 processes built it 8 times).
MemorySplit memory_split(const TraceHeader& h, const Sample& s, int gpu,
                         const ProcessTree* tree = nullptr);

// Users of the GPU processes in `s`, sorted (for the user filter's cycle).
std::vector<std::string> users_of(const Sample& s);

}  // namespace gd::top
