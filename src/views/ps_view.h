// `gpudoctor ps`: every GPU process with its workers folded under it.
#pragma once

#include <string>
#include <vector>

#include "model/gpu_lookup.h"
#include "model/orphan_holders.h"
#include "model/process_tree.h"
#include "model/sample.h"

namespace gd {

struct PsRow {
  int gpu = 0;
  GpuProcess gpu_process;               // what NVML says
  const ProcessSample* proc = nullptr;  // what /proc says (null: not collected)
  std::vector<const ProcessSample*> children;  // descendants, depth-first
  std::vector<int> child_depth;                // 1 = direct child
  bool missing() const;                        // NVML lists it, /proc does not
  bool zombie() const;
};

// Rows in GPU, then pid order. Pointers point into `sample`.
std::vector<PsRow> build_ps_rows(const Sample& sample);
// The same from the tree of a sample the caller keeps (top: once a sample).
std::vector<PsRow> build_ps_rows(const ProcessTree& tree);

// `ps --user/--pod/--namespace`: "" = any (model/pod_label.h's
// pod_matches for the pod's).
struct PsFilter {
  std::string user, pod, namespace_;
};
// Keeps rows of processes `filter` asks for on the GPUs `gpus` selects
// (empty: every GPU).
void filter_ps_rows(std::vector<PsRow>& rows, const PsFilter& filter,
                    const GpuSelection& gpus);
// `ps --sort`: mem, cpu, elapsed (largest first), pid, gpu (smallest first).
// Unknown values sort last. Throws std::invalid_argument on another key.
void sort_ps_rows(std::vector<PsRow>& rows, const std::string& key);

// How ps fits the terminal: `width` 0 is the full layout (every column at
// its fixed width, commands cut at 80 columns, for pipes and scripts);
// a width fits it (text_table.h: empty columns left out, the command cut
// with a mark, sentences wrapped); `wide` shows everything, nothing cut.
struct PsFit {
  size_t width = 0;
  bool wide = false;
};

// `holders`: the probable holders of orphaned memory (probable_holders_in),
// listed after the rows with the command that ends them.
std::string render_ps(const Sample& sample, const std::vector<PsRow>& rows,
                      const std::vector<GpuOrphanHolders>& holders = {},
                      PsFit fit = {});
std::string ps_to_json(const Sample& sample, const std::vector<PsRow>& rows,
                       const std::vector<GpuOrphanHolders>& holders = {});

}  // namespace gd
