// The process part of a sample: GPU processes and all their descendants,
// read from /proc/<pid>/ with per-process caching so that a sample of a
// busy host stays cheap.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/sample.h"
#include "procfs/process_files.h"

namespace gd::procfs {

class ProcessTable {
 public:
  // How long user, cmdline, cgroup and libs are trusted before re-reading
  // them (maps of a CUDA process is hundreds of KB: the costly file).
  static constexpr double kStaticRefreshSeconds = 30;

  explicit ProcessTable(std::string proc_root);

  // btime: boot time (Unix seconds) for start_time; nullopt leaves it unset.
  std::vector<ProcessSample> processes(const std::vector<uint32_t>& gpu_pids,
                                       double now, std::optional<uint64_t> btime);

  // How descendants are found. Children files (CONFIG_PROC_CHILDREN) are
  // used when the kernel has them; otherwise all <proc>/<pid>/stat are
  // scanned for parent pids, with the parent pid cached per pid.
  enum class Discovery { kUndecided, kChildrenFiles, kStatScan };
  Discovery discovery() const { return discovery_; }
  size_t cached_process_count() const { return cache_.size(); }

 private:
  struct Cached {
    uint64_t starttime = 0;
    std::string user, cmdline;
    std::optional<std::string> cgroup;
    std::vector<std::string> libs;
    std::vector<uint32_t> children;  // kChildrenFiles: last read
    double static_read_at = 0;
    uint64_t prev_ticks = 0;
    double prev_now = 0;
  };
  struct ScanEntry {
    uint32_t ppid = 0;
    uint64_t round = 0;
  };

  const char* pid_path(uint32_t pid, const char* file);
  const char* tid_path(uint32_t pid, uint32_t tid, const char* file);
  void decide_discovery(const std::vector<uint32_t>& gpu_pids);
  void children_from_files(uint32_t pid, std::vector<uint32_t>& out);
  void rescan_parents();
  void children_of(uint32_t pid, const PidStat& st, bool is_root, Cached& c, bool fresh,
                   std::vector<uint32_t>& out);
  const std::string& user_name(uint32_t uid);
  void read_static(uint32_t pid, Cached& c, double now);

  std::string proc_root_;
  long clk_tck_;
  long page_size_;
  Discovery discovery_ = Discovery::kUndecided;

  std::unordered_map<uint32_t, Cached> cache_;
  std::unordered_map<uint32_t, ScanEntry> parent_of_;  // kStatScan only
  uint64_t scan_round_ = 0;
  std::unordered_map<uint32_t, std::string> user_names_;

  // Reused between calls to avoid allocations on the hot path.
  std::string path_, buf_;
  std::vector<uint32_t> scratch_;
  std::vector<std::pair<uint32_t, uint32_t>> edges_;  // (ppid, pid)
};

}  // namespace gd::procfs
