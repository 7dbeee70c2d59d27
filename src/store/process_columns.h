// The processes of a block, stored columnar like the GPU series (block
// format 2, inside the numeric blob; block_codec.h):
//
// - a table of the block's processes: one entry per process identity (pid
//   and the strings that make it that process: user, name, command line,
//   cgroup, CUDA libraries, start time, namespace pid), its strings written
//   once per block instead of once per sample;
// - per sample, which entries it lists and in what order: usually "the same
//   as the sample before" (one byte);
// - per entry, a column per number over the samples that list it (parent,
//   state, CPU %, threads, RSS, /dev/shm), coded like the GPU columns (so a
//   steady RSS costs nothing and a noisy CPU % about a byte);
// - per GPU, the same for its NVML process list (pid, type; used memory,
//   and from block format 3 the SM and memory utilisation and the MIG
//   GPU/compute instance).
//
// So one process's GPU memory and CPU over an hour read six blocks' columns
// instead of parsing 3,600 JSON lines, and a day of 64 processes costs a few
// bytes per process per sample.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/sample.h"
#include "store/byte_io.h"
#include "store/numeric_fields.h"

namespace gd::store {

// Per sample, the entries a process list names, in order. A list that
// repeats the one before (most do: one byte in the block) shares its
// storage instead of copying it.
class ProcessLists {
 public:
  size_t size() const { return spans_.size(); }
  // False where the sample's processes could not be listed (GPU lists).
  bool listed(size_t i) const { return spans_[i].listed; }
  std::span<const uint32_t> operator[](size_t i) const {
    return {ids_.data() + spans_[i].begin, spans_[i].size};
  }
  void add_unlisted() { spans_.push_back({}); }
  void add_repeat() { spans_.push_back(spans_.back()); }
  // A new list: its entries are appended with add_entry.
  void add_new() {
    spans_.push_back({static_cast<uint32_t>(ids_.size()), 0, true});
  }
  void add_entry(uint32_t e) {
    ids_.push_back(e);
    ++spans_.back().size;
  }

 private:
  struct Span {
    uint32_t begin = 0, size = 0;
    bool listed = false;
  };
  std::vector<uint32_t> ids_;
  std::vector<Span> spans_;
};

struct ProcessColumns {
  struct Proc {
    ProcessSample statics;     // pid and strings; numbers are in the columns
    std::vector<uint32_t> at;  // sample positions listing it, ascending
    // One cell per position of `at`.
    std::vector<Cell> ppid, state, cpu_pct, threads, rss, dev_shm;
    std::vector<std::string> states;  // state = index into this
  };
  struct GpuProc {
    uint32_t pid = 0;
    std::string type;
    std::vector<uint32_t> at;
    std::vector<Cell> used;
    // Block format 3 on (empty before: unknown).
    std::vector<Cell> sm_util, mem_util, gi, ci;
  };
  struct Gpu {
    int index = 0;
    std::vector<GpuProc> entries;
    ProcessLists lists;  // per sample; not listed = processes unknown
  };
  std::vector<Proc> procs;
  ProcessLists lists;  // per sample, every one listed
  std::vector<Gpu> gpus;
};

// Writes the process section of `samples` (GPUs in `gpu_indices` order);
// gpu_utilisation == false writes block format 2's section (for tests).
void write_processes(ByteWriter& w, std::span<const Sample> samples,
                     const std::vector<int>& gpu_indices,
                     bool gpu_utilisation = true);
// Reads it; with keep == false only moves past it (returns empty).
// `gpu_utilisation`: the section has the GPU processes' utilisation and MIG
// columns (block format 3 and later). `tree_only`: of the columns, keeps
// only the parents and the GPU processes' memory and SM % (what
// apply_process_tree_at and apply_gpu_processes_at without all_columns
// read). Throws CodecError on a malformed section.
ProcessColumns read_processes(ByteReader& r, size_t n,
                              const std::vector<int>& gpu_indices, bool keep,
                              bool gpu_utilisation = true,
                              bool tree_only = false);
// Puts the processes back into decoded samples (one per sample, in order).
void apply_processes(const ProcessColumns& pc, std::vector<Sample>& samples);
// The same one sample at a time, i = 0, 1, ... in order: the processes
// are assigned into the sample's own lists, reusing their storage.
class ProcessApplier {
 public:
  // Throws CodecError when `pc` does not list n samples.
  ProcessApplier(const ProcessColumns& pc, size_t n);
  void apply(size_t i, Sample& s);

 private:
  const ProcessColumns& pc_;
  std::vector<size_t> next_;                   // per host entry
  std::vector<std::vector<size_t>> gpu_next_;  // per GPU, per entry
};
// Parts of it for one sample i, into storage reused from sample to sample
// (`next`: each entry's cursor into its columns, from 0 at sample 0): the
// host processes' identity and tree (ScanFields::process_tree) --
// `same_entries` when `out` already holds the entries of list i, so only
// their columns are set; returns whether nothing changed -- and one GPU's
// process list: pid, type, used memory and SM %, and with `all_columns` the
// rest too.
bool apply_process_tree_at(const ProcessColumns& pc, size_t i,
                           std::vector<size_t>& next, bool same_entries,
                           std::vector<ProcessSample>& out);
void apply_gpu_processes_at(const ProcessColumns::Gpu& gpu, size_t i,
                            std::vector<size_t>& next, GpuSample& gs,
                            bool all_columns);

}  // namespace gd::store
