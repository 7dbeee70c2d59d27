#include "error_codes.h"

#include <charconv>
#include <string>

namespace fake_nvml {
namespace {

struct CodeInfo {
  int code;
  const char* name;  // the enumerator without NVML_ERROR_ / NVML_
  const char* text;  // what the real nvmlErrorString() answers
};

// Texts of codes 0..20, 23 and 999 are those of the driver's libnvidia-ml
// (they are what nvidia-smi prints, e.g. "Failed to initialize NVML:
// Driver/library version mismatch"). The newer codes use the wording of
// their nvml.h documentation comments.
constexpr CodeInfo kCodes[] = {
    {0, "SUCCESS", "Success"},
    {1, "UNINITIALIZED", "Uninitialized"},
    {2, "INVALID_ARGUMENT", "Invalid Argument"},
    {3, "NOT_SUPPORTED", "Not Supported"},
    {4, "NO_PERMISSION", "Insufficient Permissions"},
    {5, "ALREADY_INITIALIZED", "Already Initialized"},
    {6, "NOT_FOUND", "Not Found"},
    {7, "INSUFFICIENT_SIZE", "Insufficient Size"},
    {8, "INSUFFICIENT_POWER", "Insufficient External Power"},
    {9, "DRIVER_NOT_LOADED", "Driver Not Loaded"},
    {10, "TIMEOUT", "Timeout"},
    {11, "IRQ_ISSUE", "Interrupt Request Issue"},
    {12, "LIBRARY_NOT_FOUND", "NVML Shared Library Not Found"},
    {13, "FUNCTION_NOT_FOUND", "Function Not Found"},
    {14, "CORRUPTED_INFOROM", "Corrupted infoROM"},
    {15, "GPU_IS_LOST", "GPU is lost"},
    {16, "RESET_REQUIRED", "GPU requires reset"},
    {17, "OPERATING_SYSTEM", "GPU access blocked by the operating system"},
    {18, "LIB_RM_VERSION_MISMATCH", "Driver/library version mismatch"},
    {19, "IN_USE", "In use by another client"},
    {20, "MEMORY", "Insufficient Memory"},
    {21, "NO_DATA", "No data"},
    {22, "VGPU_ECC_NOT_SUPPORTED",
     "The requested vgpu operation is not available on target device, because "
     "ECC is enabled"},
    {23, "INSUFFICIENT_RESOURCES", "Insufficient Resources"},
    {24, "FREQ_NOT_SUPPORTED", "The requested frequency is not supported"},
    {25, "ARGUMENT_VERSION_MISMATCH",
     "The provided version is invalid/unsupported"},
    {26, "DEPRECATED", "The requested functionality has been deprecated"},
    {27, "NOT_READY", "The system is not ready for the request"},
    {28, "GPU_NOT_FOUND", "No GPUs were found"},
    {29, "INVALID_STATE",
     "Resource not in correct state to perform requested operation"},
    {999, "UNKNOWN", "Unknown Error"},
};

}  // namespace

const char* error_string(int code) {
  for (const auto& c : kCodes) {
    if (c.code == code) return c.text;
  }
  return "Unknown Error";
}

std::optional<int> code_from_name(std::string_view name) {
  int number = 0;
  auto [end, ec] =
      std::from_chars(name.data(), name.data() + name.size(), number);
  if (ec == std::errc() && end == name.data() + name.size()) return number;
  for (std::string_view prefix : {"NVML_ERROR_", "NVML_"}) {
    if (name.starts_with(prefix)) {
      name.remove_prefix(prefix.size());
      break;
    }
  }
  for (const auto& c : kCodes) {
    if (name == c.name) return c.code;
  }
  return std::nullopt;
}

}  // namespace fake_nvml
