// open-files-limit: the soft RLIMIT_NOFILE of each GPU process. PyTorch
// DataLoader workers pass tensors through shared memory with one file
// descriptor per tensor in flight (the default file_descriptor strategy);
// the common login default of 1024 ends in "Too many open files" with a few
// workers and large batches.
#include <fmt/format.h>

#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

namespace {
// The usual recommendation for training jobs (and well under the hard limit
// of systemd, 524288, and Docker, 1048576).
constexpr uint64_t kMinOpenFiles = 65536;
}  // namespace

std::vector<CheckItem> check_open_files_limit(const CheckContext& ctx) {
  constexpr const char* kId = "open-files-limit";
  auto procs = gpu_processes(ctx.sample);
  if (procs.empty())
    return {make_item(kId, CheckStatus::kSkip, "-", "no GPU processes")};
  std::vector<ProcessResult> results;
  for (const auto& [pid, gpus] : procs) {
    auto lim = read_process_limit(ctx.proc_root, pid, "Max open files");
    if (!lim) {
      results.push_back({pid, CheckStatus::kSkip, "-",
                         "/proc/PID/limits is not readable (process gone or "
                         "in another PID namespace)"});
      continue;
    }
    auto text = [](std::optional<uint64_t> v) {
      return v ? std::to_string(*v) : std::string("unlimited");
    };
    std::string value =
        fmt::format("{} (hard {})", text(lim->soft), text(lim->hard));
    if (lim->soft && *lim->soft < kMinOpenFiles) {
      std::string raise =
          !lim->hard || *lim->hard >= kMinOpenFiles
              ? fmt::format("`ulimit -n {}` before starting the job",
                            kMinOpenFiles)
              : "raise the hard limit (LimitNOFILE=, limits.conf, docker "
                "--ulimit nofile=)";
      results.push_back({pid, CheckStatus::kWarn, value,
                         fmt::format("below {}: data loaders can fail with "
                                     "'Too many open files'; {}",
                                     kMinOpenFiles, raise)});
    } else {
      results.push_back({pid, CheckStatus::kPass, value, ""});
    }
  }
  return fold_process_results(kId, ctx.sample, results);
}

}  // namespace gd
