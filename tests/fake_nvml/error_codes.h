// NVML return codes by number, with the names a scenario may use and the
// texts nvmlErrorString() gives. Numbers, not nvml_api.h enumerators, so the
// scenario/fault engine builds without the NVML declarations.
#pragma once

#include <optional>
#include <string_view>

namespace fake_nvml {

inline constexpr int kSuccess = 0;
inline constexpr int kUninitialized = 1;
inline constexpr int kInvalidArgument = 2;
inline constexpr int kNotSupported = 3;
inline constexpr int kNoPermission = 4;
inline constexpr int kNotFound = 6;
inline constexpr int kInsufficientSize = 7;
inline constexpr int kDriverNotLoaded = 9;
inline constexpr int kFunctionNotFound = 13;
inline constexpr int kGpuIsLost = 15;
inline constexpr int kLibRmVersionMismatch = 18;
inline constexpr int kArgumentVersionMismatch = 25;
inline constexpr int kUnknown = 999;

// nvmlErrorString() text; "Unknown Error" for a code NVML does not define.
const char* error_string(int code);

// "NOT_SUPPORTED", "NVML_ERROR_NOT_SUPPORTED", "SUCCESS", "NVML_SUCCESS" or a
// decimal number -> code. nullopt for a name NVML does not define.
std::optional<int> code_from_name(std::string_view name);

}  // namespace fake_nvml
