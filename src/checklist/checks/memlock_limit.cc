// memlock-limit: the locked-memory limit of each GPU process. NCCL and
// other RDMA users (InfiniBand/RoCE, GPUDirect RDMA) register buffers that
// count against RLIMIT_MEMLOCK; with the usual 64 KiB or 8 MiB default
// (Docker, many distributions) registration fails or NCCL falls back to
// slower transports. CUDA's own pinned host memory does not count, so
// without RDMA devices a low limit only gets a note.
#include <fmt/format.h>

#include <filesystem>

#include "checklist/check_util.h"
#include "views/format.h"

namespace gd {

using namespace checklist;

std::vector<CheckItem> check_memlock_limit(const CheckContext& ctx) {
  constexpr const char* kId = "memlock-limit";
  auto procs = gpu_processes(ctx.sample);
  if (procs.empty())
    return {make_item(kId, CheckStatus::kSkip, "-", "no GPU processes")};
  std::error_code ec;
  bool rdma =
      !std::filesystem::is_empty(ctx.sys_root + "/class/infiniband", ec) && !ec;
  std::vector<ProcessResult> results;
  for (const auto& [pid, gpus] : procs) {
    auto lim = read_process_limit(ctx.proc_root, pid, "Max locked memory");
    if (!lim) {
      results.push_back({pid, CheckStatus::kSkip, "-",
                         "/proc/PID/limits is not readable (process gone or "
                         "in another PID namespace)"});
    } else if (!lim->soft) {
      results.push_back({pid, CheckStatus::kPass, "unlimited", ""});
    } else if (rdma) {
      results.push_back(
          {pid, CheckStatus::kWarn, human_bytes(*lim->soft),
           "RDMA devices are present: NCCL/GPUDirect need to lock buffers; "
           "run with memlock unlimited (docker --ulimit memlock=-1, "
           "LimitMEMLOCK=infinity, limits.conf)"});
    } else {
      results.push_back({pid, CheckStatus::kPass, human_bytes(*lim->soft),
                         "no RDMA devices, so the limit does not restrict "
                         "CUDA (it matters for InfiniBand/RoCE)"});
    }
  }
  return fold_process_results(kId, ctx.sample, results);
}

}  // namespace gd
