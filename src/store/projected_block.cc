#include "store/projected_block.h"

#include <algorithm>

#include "store/numeric_fields.h"
#include "store/process_columns.h"
#include "trace/trace_io.h"

namespace gd::store {

ProjectedBlockDecoder::ProjectedBlockDecoder(const std::string& path,
                                             const ScanFields& fields)
    : gpu_processes_(fields.gpu_processes), process_tree_(fields.process_tree) {
  for (const std::string& name : fields.gpu) {
    const int f = find_gpu_field(name);
    if (f < 0)
      throw StoreError(path + ": unknown GPU field '" + name +
                       "' (the <field> of a gpu.<field> metric)");
    gpu_fields_.push_back(f);
    fields_.push_back(&gpu_fields()[static_cast<size_t>(f)]);
  }
}

void ProjectedBlockDecoder::read_marks(std::string_view rest_blob,
                                       Prepared& block) {
  const std::string_view lines = decompress_rest(rest_blob, rest_text_);
  const NumericColumns& cols = block.cols;
  const size_t n = cols.t.size();
  size_t begin = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t end = lines.find('\n', begin);
    if (end == std::string_view::npos)
      throw CodecError("block has fewer samples than its columns");
    const std::string_view line = lines.substr(begin, end - begin);
    begin = end + 1;
    // A line starts {"t":<number>, and the time never holds a comma.
    const size_t comma = line.find(',');
    const std::string_view rest =
        comma == std::string_view::npos ? line : line.substr(comma);
    if (!block.marks.empty() && rest == last_line_) {
      block.sets.push_back(static_cast<uint32_t>(block.marks.size() - 1));
      continue;
    }
    sample_from_json(line, "block", parsed_);
    last_line_.assign(rest);
    std::vector<GpuMark> marks;
    for (const GpuSample& g : parsed_.gpus) {
      const auto pos =
          std::find(cols.gpu_indices.begin(), cols.gpu_indices.end(), g.index);
      // The writer has a column section for every GPU of every sample.
      if (pos == cols.gpu_indices.end())
        throw CodecError("sample has GPU " + std::to_string(g.index) +
                         " that the block's columns do not");
      marks.push_back({g.index, g.lost, g.stale,
                       static_cast<size_t>(pos - cols.gpu_indices.begin())});
    }
    block.marks.push_back(std::move(marks));
    block.sets.push_back(static_cast<uint32_t>(block.marks.size() - 1));
  }
  if (begin != lines.size())
    throw CodecError("block has more samples than its columns");
}

void ProjectedBlockDecoder::gather_cells(Prepared& block) const {
  const NumericColumns& cols = block.cols;
  size_t total = 0;
  for (uint32_t set : block.sets) total += block.marks[set].size();
  block.cells.clear();
  block.cells.reserve(total * gpu_fields_.size());
  for (size_t i = 0; i < block.sets.size(); ++i)
    for (const GpuMark& m : block.marks[block.sets[i]])
      for (int f : gpu_fields_) {
        const std::vector<Cell>& col = cols.gpu[m.section][f];
        block.cells.push_back(col.empty() ? Cell{} : col[i]);
      }
}

size_t ProjectedBlockDecoder::fill_gpus(const Prepared& block, size_t i,
                                        size_t cell) {
  const std::vector<GpuMark>& marks = block.marks[block.sets[i]];
  sample_.gpus.resize(marks.size());
  for (size_t k = 0; k < marks.size(); ++k) {
    GpuSample& g = sample_.gpus[k];
    g.index = marks[k].index;
    g.lost = marks[k].lost;
    g.stale = marks[k].stale;
    for (const NumericField<GpuSample>* f : fields_)
      set_cell(g, *f, block.cells[cell++]);
  }
  return cell;
}

void ProjectedBlockDecoder::gather_gpu_processes(Prepared& block) {
  const ProcessColumns& pc = block.cols.processes;
  std::vector<std::vector<size_t>> next(pc.gpus.size());
  for (size_t k = 0; k < pc.gpus.size(); ++k)
    next[k].assign(pc.gpus[k].entries.size(), 0);
  for (size_t i = 0; i < block.sets.size(); ++i)
    // A GPU's process lists are in its column section's place.
    for (const GpuMark& m : block.marks[block.sets[i]]) {
      apply_gpu_processes_at(pc.gpus[m.section], i, next[m.section], gathered_,
                             false);
      if (!gathered_.processes) {
        block.gpu_process_counts.push_back(-1);
        continue;
      }
      block.gpu_process_counts.push_back(
          static_cast<int32_t>(gathered_.processes->size()));
      block.gpu_processes.insert(block.gpu_processes.end(),
                                 gathered_.processes->begin(),
                                 gathered_.processes->end());
    }
}

std::pair<size_t, size_t> ProjectedBlockDecoder::fill_processes(
    const Prepared& block, size_t i, std::pair<size_t, size_t> at, bool& same) {
  const ProcessColumns& pc = block.cols.processes;
  same = false;
  if (process_tree_)
    same = apply_process_tree_at(
        pc, i, next_, i > 0 && std::ranges::equal(pc.lists[i], pc.lists[i - 1]),
        sample_.processes);
  if (!gpu_processes_) return at;
  auto& [count, process] = at;
  for (GpuSample& g : sample_.gpus) {
    const int32_t n = block.gpu_process_counts[count++];
    if (n < 0) {
      g.processes.reset();
      continue;
    }
    const auto first =
        block.gpu_processes.begin() + static_cast<std::ptrdiff_t>(process);
    if (!g.processes) g.processes.emplace();
    g.processes->assign(first, first + n);
    process += static_cast<size_t>(n);
  }
  return at;
}

ProjectedBlockDecoder::Prepared ProjectedBlockDecoder::prepare(
    std::string_view numeric_blob, std::string_view rest_blob) {
  const bool processes = gpu_processes_ || process_tree_;
  Prepared block;
  block.cols = decode_numeric_fields(numeric_blob, gpu_fields_, {}, processes,
                                     &numeric_text_, true);
  if (processes && !block.cols.has_processes) {
    // Block format 1 keeps its processes in the lines: decoded whole.
    block.whole = decode_block(numeric_blob, rest_blob);
    return block;
  }
  read_marks(rest_blob, block);
  gather_cells(block);
  const size_t n = block.cols.t.size();
  const ProcessColumns& pc = block.cols.processes;
  if (processes) {
    if (pc.lists.size() != n) throw CodecError("process lists out of step");
    if (pc.gpus.size() != block.cols.gpu_indices.size())
      throw CodecError("process lists out of step");
    for (const auto& gpu : pc.gpus)
      if (gpu.lists.size() != n) throw CodecError("process lists out of step");
    if (gpu_processes_) gather_gpu_processes(block);
  }
  return block;
}

bool ProjectedBlockDecoder::pass(const Prepared& block, const Each& each) {
  if (block.whole) {
    for (const Sample& s : *block.whole)
      if (!each(s, false)) return false;
    return true;
  }
  const size_t n = block.cols.t.size();
  const ProcessColumns& pc = block.cols.processes;
  const bool processes = block.cols.has_processes;
  if (processes) next_.assign(pc.procs.size(), 0);
  size_t cell = 0;
  std::pair<size_t, size_t> process_at{0, 0};
  for (size_t i = 0; i < n; ++i) {
    sample_.t = block.cols.t[i];
    cell = fill_gpus(block, i, cell);
    bool same = false;
    if (processes) process_at = fill_processes(block, i, process_at, same);
    if (!each(sample_, same)) return false;
  }
  return true;
}

}  // namespace gd::store
