// cuda-runtime: the CUDA runtime each GPU process maps (libcudart.so.X.Y or
// pip's libcudart-<hash>.so.X.Y in /proc/PID/maps) against the highest CUDA
// version the driver supports. A newer major fails ("driver version is
// insufficient"); a newer minor of the same major runs under CUDA minor version
// compatibility with limited features (no JIT of newer PTX), so it warns.
// (diagnose's driver-cuda-mismatch rule has the finer cases, e.g. cuda-compat.)
#include <fmt/format.h>

#include <map>

#include "checklist/check_util.h"
#include "common/cuda_version.h"

namespace gd {

using namespace checklist;

std::vector<CheckItem> check_cuda_runtime(const CheckContext& ctx) {
  constexpr const char* kId = "cuda-runtime";
  if (auto skip = skip_without_nvml(ctx.header, kId)) return {*skip};
  const std::string& drv_text = ctx.header.driver->cuda_driver_version;
  auto drv = parse_cuda_version(drv_text);
  if (!drv || drv->minor < 0)
    return {make_item(kId, CheckStatus::kSkip, "-",
                      "the driver did not report its CUDA version")};
  auto procs = gpu_processes(ctx.sample);
  if (procs.empty())
    return {make_item(kId, CheckStatus::kSkip, "-", "no GPU processes")};

  std::map<std::string, std::vector<uint32_t>> by_runtime;  // "12.1" -> pids
  for (const auto& [pid, gpus] : procs) {
    const ProcessSample* p = find_process(ctx.sample, pid);
    if (!p) continue;
    std::string rt = cuda_runtime_version(p->libs);
    if (!rt.empty()) by_runtime[rt].push_back(pid);
  }
  if (by_runtime.empty())
    return {make_item(kId, CheckStatus::kSkip, "-",
                      "no GPU process maps a versioned libcudart (static "
                      "runtime, or processes not visible)")};

  std::vector<CheckItem> out;
  for (const auto& [rt_text, pids] : by_runtime) {
    std::string who = process_label(ctx.sample, pids.front());
    if (pids.size() > 1) who += fmt::format(" and {} more", pids.size() - 1);
    std::string value = fmt::format("runtime {} ({}), driver supports {}",
                                    rt_text, who, drv_text);
    auto rt = parse_cuda_version(rt_text);
    if (!rt) continue;
    if (rt->major > drv->major) {
      out.push_back(make_item(
          kId, CheckStatus::kFail, value,
          fmt::format("upgrade the driver to one supporting CUDA {}, or use a "
                      "build of the program for CUDA {}.x",
                      rt_text, drv->major)));
    } else if (rt->major == drv->major && rt->minor > drv->minor) {
      out.push_back(make_item(
          kId, CheckStatus::kWarn, value,
          fmt::format("runs under minor version compatibility (newer PTX and "
                      "features fail): upgrade the driver to one supporting "
                      "CUDA {} or use a CUDA {} build",
                      rt_text, drv_text)));
    } else {
      out.push_back(make_item(kId, CheckStatus::kPass, value));
    }
  }
  return out;
}

}  // namespace gd
