// Blocks decoded to samples that hold only the fields a ScanFields asks for
// (history_store.h): the numeric columns named, the processes' columns, and
// from the rest blob only which GPUs each sample has (and whether lost or
// stale). A week of a node is read in seconds instead of rebuilding every
// field of every sample.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/sample.h"
#include "store/block_codec.h"
#include "store/history_store.h"
#include "store/numeric_fields.h"

namespace gd::store {

class ProjectedBlockDecoder {
 public:
  // Throws StoreError naming `path` on a field that is not a GPU field.
  ProjectedBlockDecoder(const std::string& path, const ScanFields& fields);

  // A GPU of a sample as its rest line lists it, and its column section.
  struct GpuMark {
    int index = 0;
    bool lost = false, stale = false;
    size_t section = 0;
  };
  // A block decoded up to its samples: the columns, and each sample's GPUs
  // (marks[sets[i]] for sample i). Block format 1: its samples, whole.
  struct Prepared {
    NumericColumns cols;
    std::vector<std::vector<GpuMark>> marks;
    std::vector<uint32_t> sets;
    // The GPU fields asked for, sample after sample (GPU after GPU in the
    // sample's order, field after field): read in the order they are used
    // instead of from one column per GPU and field.
    std::vector<Cell> cells;
    // Each GPU's processes the same way: per sample and GPU how many
    // (-1: not listed), then those processes.
    std::vector<int32_t> gpu_process_counts;
    std::vector<GpuProcess> gpu_processes;
    std::optional<std::vector<Sample>> whole;
  };
  // The costly half: decompressing and parsing the block. Throws
  // CodecError (or TraceError on a bad line) on a corrupted block. May run
  // on another thread than pass(), one prepare() at a time.
  Prepared prepare(std::string_view numeric_blob, std::string_view rest_blob);
  // A sample, and whether its host processes are those of the sample
  // passed before it in the same block.
  using Each = std::function<bool(const Sample&, bool same_processes)>;
  // Passes a prepared block's samples to `each` in order until it returns
  // false (then returns false). The sample passed is one object refilled
  // each time: a steady process's strings are not copied again.
  bool pass(const Prepared& block, const Each& each);
  // Both; a corrupted block throws before any sample is passed.
  bool decode(std::string_view numeric_blob, std::string_view rest_blob,
              const Each& each) {
    return pass(prepare(numeric_blob, rest_blob), each);
  }

 private:
  void read_marks(std::string_view rest_blob, Prepared& block);
  void gather_cells(Prepared& block) const;
  void gather_gpu_processes(Prepared& block);
  // Sample i's GPUs from the cells from `cell` on; returns the next cell.
  size_t fill_gpus(const Prepared& block, size_t i, size_t cell);
  // Sample i's processes; returns where the next sample's GPU processes
  // start (counts, processes). `same`: whether the host processes are
  // those of sample i - 1.
  std::pair<size_t, size_t> fill_processes(const Prepared& block, size_t i,
                                           std::pair<size_t, size_t> at,
                                           bool& same);

  std::vector<int> gpu_fields_;  // indices into gpu_fields()
  std::vector<const NumericField<GpuSample>*> fields_;  // the same
  bool gpu_processes_ = false, process_tree_ = false;
  // prepare()'s: the last line parsed, without its time (consecutive lines
  // mostly differ only in their time, so most lines are compared, not
  // parsed), and the sample it is parsed into.
  std::string last_line_;
  std::string numeric_text_, rest_text_;  // decompressed, reused
  Sample parsed_;
  GpuSample gathered_;
  // pass()'s: the sample passed, and the cursors into the process columns.
  Sample sample_;
  std::vector<size_t> next_;
};

}  // namespace gd::store
