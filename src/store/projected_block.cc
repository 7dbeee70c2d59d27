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
  }
}

void ProjectedBlockDecoder::read_marks(std::string_view rest_blob,
                                       const NumericColumns& cols) {
  const std::string lines = decompress_rest(rest_blob);
  const size_t n = cols.t.size();
  marks_.clear();
  sets_.clear();
  size_t begin = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t end = lines.find('\n', begin);
    if (end == std::string::npos)
      throw CodecError("block has fewer samples than its columns");
    const std::string_view line =
        std::string_view(lines).substr(begin, end - begin);
    begin = end + 1;
    // A line starts {"t":<number>, and the time never holds a comma.
    const size_t comma = line.find(',');
    const std::string_view rest =
        comma == std::string_view::npos ? line : line.substr(comma);
    if (!marks_.empty() && have_last_ && rest == last_line_) {
      sets_.push_back(static_cast<uint32_t>(marks_.size() - 1));
      continue;
    }
    sample_from_json(line, "block", parsed_);
    last_line_.assign(rest);
    have_last_ = true;
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
    marks_.push_back(std::move(marks));
    sets_.push_back(static_cast<uint32_t>(marks_.size() - 1));
  }
  if (begin != lines.size())
    throw CodecError("block has more samples than its columns");
}

void ProjectedBlockDecoder::fill_gpus(const NumericColumns& cols, size_t i) {
  const std::vector<GpuMark>& marks = marks_[sets_[i]];
  sample_.gpus.resize(marks.size());
  for (size_t k = 0; k < marks.size(); ++k) {
    GpuSample& g = sample_.gpus[k];
    g.index = marks[k].index;
    g.lost = marks[k].lost;
    g.stale = marks[k].stale;
    const auto& gc = cols.gpu[marks[k].section];
    for (int f : gpu_fields_)
      set_cell(g, gpu_fields()[f], gc[f].empty() ? Cell{} : gc[f][i]);
  }
}

void ProjectedBlockDecoder::fill_processes(const ProcessColumns& pc, size_t i) {
  if (process_tree_)
    apply_process_tree_at(pc, i, next_, i > 0 && pc.lists[i] == pc.lists[i - 1],
                          sample_.processes);
  if (!gpu_processes_) return;
  for (size_t k = 0; k < pc.gpus.size(); ++k) {
    GpuSample* gs = nullptr;
    for (auto& x : sample_.gpus)
      if (x.index == pc.gpus[k].index) gs = &x;
    if (gs) apply_gpu_processes_at(pc.gpus[k], i, gpu_next_[k], *gs);
  }
}

bool ProjectedBlockDecoder::decode(
    std::string_view numeric_blob, std::string_view rest_blob,
    const std::function<bool(const Sample&)>& each) {
  const bool processes = gpu_processes_ || process_tree_;
  const NumericColumns cols =
      decode_numeric_fields(numeric_blob, gpu_fields_, {}, processes);
  if (processes && !cols.has_processes) {
    // Block format 1 keeps its processes in the lines: decoded whole.
    for (const Sample& s : decode_block(numeric_blob, rest_blob))
      if (!each(s)) return false;
    return true;
  }
  read_marks(rest_blob, cols);
  const size_t n = cols.t.size();
  const ProcessColumns& pc = cols.processes;
  if (processes) {
    if (pc.lists.size() != n) throw CodecError("process lists out of step");
    for (const auto& gpu : pc.gpus)
      if (gpu.lists.size() != n) throw CodecError("process lists out of step");
    next_.assign(pc.procs.size(), 0);
    gpu_next_.resize(pc.gpus.size());
    for (size_t k = 0; k < pc.gpus.size(); ++k)
      gpu_next_[k].assign(pc.gpus[k].entries.size(), 0);
  }
  for (size_t i = 0; i < n; ++i) {
    sample_.t = cols.t[i];
    fill_gpus(cols, i);
    if (processes) fill_processes(pc, i);
    if (!each(sample_)) return false;
  }
  return true;
}

}  // namespace gd::store
