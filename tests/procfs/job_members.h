// How many of a sample's processes are the GPU process `root` and its
// descendants: a sample also lists the root's ancestors up to its launcher
// or shell, which tests of the descendants leave aside.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "model/process_tree.h"

namespace gd::test {

inline size_t job_size(const std::vector<ProcessSample>& ps, uint32_t root) {
  std::vector<std::pair<uint32_t, uint32_t>> links;
  bool listed = false;
  for (const ProcessSample& p : ps) {
    listed = listed || p.pid == root;
    if (p.ppid) links.emplace_back(p.pid, *p.ppid);
  }
  return listed ? 1 + PidTree(std::move(links)).descendants(root).size() : 0;
}

}  // namespace gd::test
