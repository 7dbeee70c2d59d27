// Small helpers shared by the DeviceReader files: NVML strings, field
// values, optional functions and what counts as a failed read.
#pragma once

#include <cstring>
#include <optional>
#include <string>

#include "nvml/nvml_api.h"

namespace gd::nvml {

inline std::string from_buffer(const char* buf, size_t size) {
  return std::string(buf, strnlen(buf, size));
}

inline std::optional<double> field_as_double(const nvmlFieldValue_t& v) {
  switch (v.valueType) {
    case NVML_VALUE_TYPE_DOUBLE:
      return v.value.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return v.value.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return static_cast<double>(v.value.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return static_cast<double>(v.value.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      return static_cast<double>(v.value.sllVal);
    default:
      return std::nullopt;
  }
}

// Calls fn(args...) if the library has it; FUNCTION_NOT_FOUND otherwise.
template <typename Fn, typename... Args>
inline nvmlReturn_t call_if(Fn fn, Args... args) {
  return fn ? fn(args...) : NVML_ERROR_FUNCTION_NOT_FOUND;
}

// A read that failed (nvidia-smi's ERR!), as opposed to success, a lost GPU
// (its own state) or a field this GPU or driver does not have (N/A).
inline bool is_failed_read(nvmlReturn_t rc) {
  switch (rc) {
    case NVML_SUCCESS:
    case NVML_ERROR_GPU_IS_LOST:
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_FUNCTION_NOT_FOUND:
    case NVML_ERROR_NO_DATA:
      return false;
    default:
      return true;
  }
}

// Tries the variants of one function newest first, starting at `variant`
// (variants found missing earlier are skipped), and returns the first answer
// that is not FUNCTION_NOT_FOUND. A variant that is missing (no symbol, or
// the driver says FUNCTION_NOT_FOUND) advances `variant` for good.
template <typename... Calls>
nvmlReturn_t first_available(int& variant, Calls&&... calls) {
  nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
  int i = 0;
  auto try_one = [&](auto& call) {
    if (i++ < variant) return false;
    rc = call();
    if (rc != NVML_ERROR_FUNCTION_NOT_FOUND) return true;
    variant = i;
    return false;
  };
  (try_one(calls) || ...);
  return rc;
}

}  // namespace gd::nvml
