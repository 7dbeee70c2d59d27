// kernel-module: the version of the loaded nvidia kernel module
// (/proc/driver/nvidia/version) against the user-space driver that NVML
// reports. They differ after a driver upgrade without a reboot; NVML then
// refuses to work ("Driver/library version mismatch").
#include <fmt/format.h>

#include <cctype>
#include <sstream>

#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

namespace {

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Tue Oct..."
// or "... Open Kernel Module for x86_64  550.54.14  Release Build ...":
// the first token after "Module" made of digits and dots, with a dot.
std::string module_version(const std::string& text) {
  auto nvrm = text.find("NVRM version:");
  if (nvrm == std::string::npos) return {};
  std::string line = text.substr(nvrm, text.find('\n', nvrm) - nvrm);
  auto module = line.find("Module");
  std::istringstream in(line.substr(module == std::string::npos ? 0 : module));
  std::string tok;
  while (in >> tok) {
    bool version = std::isdigit(static_cast<unsigned char>(tok[0])) &&
                   tok.find('.') != std::string::npos &&
                   tok.find_first_not_of("0123456789.") == std::string::npos;
    if (version) return tok;
  }
  return {};
}

}  // namespace

std::vector<CheckItem> check_kernel_module(const CheckContext& ctx) {
  constexpr const char* kId = "kernel-module";
  const TraceHeader& h = ctx.header;
  auto text = read_text(ctx.proc_root + "/driver/nvidia/version");
  if (!text) {
    if (h.nvml_status == kNvmlNoDriver)
      return {make_item(kId, CheckStatus::kSkip, "-",
                        "no NVIDIA driver (no nvidia kernel module loaded)")};
    return {make_item(kId, CheckStatus::kSkip, "-",
                      "/proc/driver/nvidia/version is not readable (containers "
                      "often hide it)")};
  }
  std::string mod = module_version(*text);
  if (mod.empty())
    return {make_item(kId, CheckStatus::kSkip, "-",
                      "no version in /proc/driver/nvidia/version")};
  if (h.nvml_status == kNvmlDriverMismatch)
    return {
        make_item(kId, CheckStatus::kFail,
                  fmt::format("module {}, NVML refuses: driver/library "
                              "version mismatch",
                              mod),
                  fmt::format("the user-space driver is not {}: reboot, or "
                              "stop GPU users and reload the nvidia modules",
                              mod))};
  if (h.nvml_status == kNvmlNoDriver)
    return {make_item(kId, CheckStatus::kWarn,
                      fmt::format("module {}, no libnvidia-ml.so.1", mod),
                      "install the user-space driver of the same version (or "
                      "pass --nvml-lib PATH)")};
  if (h.nvml_status != kNvmlOk || !h.driver || h.driver->driver_version.empty())
    return {make_item(kId, CheckStatus::kSkip, fmt::format("module {}", mod),
                      "NVML did not report its driver version to compare")};
  const std::string& lib = h.driver->driver_version;
  if (lib != mod)
    return {make_item(
        kId, CheckStatus::kFail,
        fmt::format("module {}, NVML library {}", mod, lib),
        "kernel module and user-space driver differ: reboot, or stop GPU users "
        "and reload the nvidia modules")};
  return {make_item(kId, CheckStatus::kPass,
                    fmt::format("module {} = NVML library", mod))};
}

}  // namespace gd
