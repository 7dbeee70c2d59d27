// driver: the NVIDIA driver and NVML library versions, and whether NVML can
// be used at all.
#include <fmt/format.h>

#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

std::vector<CheckItem> check_driver(const CheckContext& ctx) {
  constexpr const char* kId = "driver";
  const TraceHeader& h = ctx.header;
  if (h.nvml_status == kNvmlNoDriver)
    return {make_item(kId, CheckStatus::kSkip, "-", "no NVIDIA driver")};
  if (h.nvml_status == kNvmlDriverMismatch)
    return {make_item(
        kId, CheckStatus::kFail, "NVML: driver/library version mismatch",
        "the loaded kernel module and libnvidia-ml differ (a driver upgrade "
        "without reboot): reboot, or stop GPU users and reload the nvidia "
        "modules")};
  if (h.nvml_status == kNvmlNoPermission)
    return {make_item(kId, CheckStatus::kWarn, "NVML: insufficient permissions",
                      "run as root or give this user access to /dev/nvidia*")};
  if (h.nvml_status != kNvmlOk || !h.driver)
    return {make_item(
        kId, CheckStatus::kFail,
        "NVML error" +
            (h.nvml_error.empty() ? std::string() : ": " + h.nvml_error),
        "check `dmesg | grep -i nvrm` and `nvidia-smi`")};
  const DriverInfo& d = *h.driver;
  std::string value =
      fmt::format("driver {}, NVML {}, CUDA {}",
                  d.driver_version.empty() ? "?" : d.driver_version,
                  d.nvml_version.empty() ? "?" : d.nvml_version,
                  d.cuda_driver_version.empty() ? "?" : d.cuda_driver_version);
  if (d.driver_version.empty())
    return {make_item(kId, CheckStatus::kSkip, value,
                      "NVML did not report the driver version")};
  // NVML's version is "<CUDA major>.<driver version>" ("12.535.129.03"): a
  // library from another driver release names another driver version.
  const std::string& n = d.nvml_version;
  bool nvml_matches = n.empty() || (n.size() > d.driver_version.size() &&
                                    n.ends_with("." + d.driver_version));
  if (!nvml_matches)
    return {make_item(kId, CheckStatus::kWarn, value,
                      "the NVML library belongs to another driver release: "
                      "check which libnvidia-ml.so.1 is loaded (ldconfig -p, "
                      "LD_LIBRARY_PATH, container mounts)")};
  return {make_item(kId, CheckStatus::kPass, value)};
}

}  // namespace gd
