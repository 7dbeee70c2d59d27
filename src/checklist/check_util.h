// Helpers shared by the checks: reading files under the fixture-able roots,
// finding the GPU processes of the sample, and folding per-GPU results into
// few lines.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "checklist/checklist.h"
#include "model/gpu_lookup.h"

namespace gd::checklist {

// Whole file at `path`, or nullopt when it cannot be opened or read.
std::optional<std::string> read_text(const std::string& path);
// First line of the file without surrounding blanks.
std::optional<std::string> read_line(const std::string& path);

// A skip item when NVML could not be used (no driver, permissions, ...), so
// GPU checks say why they could not look; nullopt when NVML answered.
std::optional<CheckItem> skip_without_nvml(const TraceHeader& header,
                                           const char* id);

// pid -> indices of the GPUs NVML lists it on, from the sample.
std::map<uint32_t, std::set<int>> gpu_processes(const Sample& sample);
// The /proc view of `pid` in the sample; null when not collected or missing.
const ProcessSample* find_process(const Sample& sample, uint32_t pid);
// "python (pid 4242)" or "pid 4242".
std::string process_label(const Sample& sample, uint32_t pid);

const GpuSample* find_gpu_sample(const Sample& sample, int index);

// NVML bus id "00000000:07:00.0" -> sysfs name "0000:07:00.0"; "" when
// it does not parse.
std::string sysfs_pci_name(const std::string& nvml_bus_id);

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; nullopt on malformed text.
std::optional<std::set<int>> parse_cpu_list(const std::string& text);

// One GPU's result of a per-GPU check.
struct GpuResult {
  int gpu = 0;
  CheckStatus status = CheckStatus::kPass;
  std::string value;
  std::string detail;
};
// The GPU's sample when it answered; otherwise nullptr, with a skip result
// ("GPU is lost" / "GPU did not answer") appended to `results`.
const GpuSample* answering_gpu_sample(const Sample& sample, int index,
                                      std::vector<GpuResult>& results);
// GPUs with the same status, value and detail share one item ("GPU 0,1,2:
// on"), so an 8-GPU server prints one line per distinct answer. No results
// (no GPUs) give one skip item.
std::vector<CheckItem> fold_gpu_results(const char* id,
                                        const std::vector<GpuResult>& results);

// One GPU process's result of a per-process check; folded like GPUs
// ("pid 4242, 4250: 1024").
struct ProcessResult {
  uint32_t pid = 0;
  CheckStatus status = CheckStatus::kPass;
  std::string value;
  std::string detail;
};
std::vector<CheckItem> fold_process_results(
    const char* id, const Sample& sample,
    const std::vector<ProcessResult>& results);

// A resource limit from /proc/PID/limits ("Max open files  1024  4096
// files"); a missing value (nullopt) is "unlimited".
struct ProcessLimit {
  std::optional<uint64_t> soft, hard;
};
// nullopt when the file or the line cannot be read.
std::optional<ProcessLimit> read_process_limit(const std::string& proc_root,
                                               uint32_t pid,
                                               const std::string& name);

CheckItem make_item(const char* id, CheckStatus status, std::string value,
                    std::string detail = "");

}  // namespace gd::checklist
