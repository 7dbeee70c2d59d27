// Blocks decoded to samples that hold only the fields a ScanFields asks for
// (history_store.h): the numeric columns named, the processes' columns, and
// from the rest blob only which GPUs each sample has (and whether lost or
// stale). A week of a node is read in seconds instead of rebuilding every
// field of every sample.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/sample.h"
#include "store/block_codec.h"
#include "store/history_store.h"

namespace gd::store {

class ProjectedBlockDecoder {
 public:
  // Throws StoreError naming `path` on a field that is not a GPU field.
  ProjectedBlockDecoder(const std::string& path, const ScanFields& fields);
  // Passes one block's samples to `each` in order, until it returns false
  // (then returns false). The sample passed is one object refilled each
  // time: a steady process's strings are not copied again. A corrupted
  // block throws (CodecError, or TraceError on a bad line) before any
  // sample is passed.
  bool decode(std::string_view numeric_blob, std::string_view rest_blob,
              const std::function<bool(const Sample&)>& each);

 private:
  // A GPU of a sample as its rest line lists it, and its column section.
  struct GpuMark {
    int index = 0;
    bool lost = false, stale = false;
    size_t section = 0;
  };
  // The marks of every sample of the block (marks_[sets_[i]] for sample i).
  void read_marks(std::string_view rest_blob, const NumericColumns& cols);
  void fill_gpus(const NumericColumns& cols, size_t i);
  void fill_processes(const ProcessColumns& pc, size_t i);

  std::vector<int> gpu_fields_;  // indices into gpu_fields()
  bool gpu_processes_ = false, process_tree_ = false;
  // The last line parsed, without its time: consecutive lines mostly
  // differ only in their time, so most lines are compared, not parsed.
  std::string last_line_;
  bool have_last_ = false;
  Sample parsed_;
  std::vector<std::vector<GpuMark>> marks_;  // distinct GPU lists
  std::vector<uint32_t> sets_;
  // The sample passed, and the cursors into the process columns.
  Sample sample_;
  std::vector<size_t> next_;
  std::vector<std::vector<size_t>> gpu_next_;
};

}  // namespace gd::store
