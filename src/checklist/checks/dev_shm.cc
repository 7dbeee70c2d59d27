// dev-shm: the size of /dev/shm as the GPU process sees it (in its own
// mount namespace, through /proc/PID/root). PyTorch DataLoader workers hand
// batches to the trainer through shared memory; Docker's default /dev/shm
// of 64 MiB makes them die with "bus error" or "No space left on device".
#include <fmt/format.h>

#include "checklist/check_util.h"
#include "common/bytes_text.h"
#include "model/process_tree.h"

namespace gd {

using namespace checklist;

namespace {
// A few batches of images in flight across workers need hundreds of MiB;
// below 1 GiB multi-worker loaders run out (Docker's default is 64 MiB).
constexpr uint64_t kMinShmBytes = 1ull << 30;
}  // namespace

std::vector<CheckItem> check_dev_shm(const CheckContext& ctx) {
  constexpr const char* kId = "dev-shm";
  auto procs = gpu_processes(ctx.sample);
  if (procs.empty())
    return {make_item(kId, CheckStatus::kSkip, "-", "no GPU processes")};
  std::vector<ProcessResult> results;
  ProcessTree tree(ctx.sample);
  for (const auto& [pid, gpus] : procs) {
    auto size = ctx.fs_size_bytes
                    ? ctx.fs_size_bytes(
                          fmt::format("{}/{}/root/dev/shm", ctx.proc_root, pid))
                    : std::nullopt;
    if (!size) {
      results.push_back({pid, CheckStatus::kSkip, "-",
                         "cannot look into its mount namespace (needs the "
                         "same user or root), or it has no /dev/shm"});
      continue;
    }
    auto workers = tree.live_descendants(pid).size();
    std::string value = fmt::format("{}, {} worker{}", human_bytes(*size),
                                    workers, workers == 1 ? "" : "s");
    if (*size < kMinShmBytes && workers > 0)
      results.push_back(
          {pid, CheckStatus::kWarn, value,
           "data-loader workers share batches through /dev/shm: give it at "
           "least 1 GiB (docker --shm-size=8g or --ipc=host; Kubernetes: an "
           "emptyDir with medium Memory on /dev/shm)"});
    else if (*size < kMinShmBytes)
      results.push_back({pid, CheckStatus::kPass, value,
                         "small, but no worker processes use it now"});
    else
      results.push_back({pid, CheckStatus::kPass, value, ""});
  }
  return fold_process_results(kId, ctx.sample, results);
}

}  // namespace gd
