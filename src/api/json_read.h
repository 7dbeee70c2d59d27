// What every reader of src/api shares: a reply is untrusted input from the
// network, parsed with a depth bound (common/bounded_json.h) and read field
// by field with a one-line std::runtime_error naming what is wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace gd::api {

// Bounds every reader holds numbers to: a GPU index (NVML counts far fewer
// GPUs) and a pid (PID_MAX_LIMIT of 64-bit Linux: no pid is larger).
inline constexpr uint32_t kMaxGpu = 1023;
inline constexpr uint32_t kMaxPid = 4194304;

// `body` as a JSON object; throws "WHAT: the reply is not a JSON object"
// (or JsonTooDeep) otherwise.
nlohmann::json parse_object(std::string_view body, const char* what);

// The field `key` of object `j`: absent or null gives the fallback; a value
// of another type throws "WHAT: 'KEY' is not a ...". Strings are cut to
// `max_bytes`.
double number_or(const nlohmann::json& j, const char* key, double fallback,
                 const char* what);
std::optional<double> optional_number(const nlohmann::json& j, const char* key,
                                      const char* what);
std::string text_or_empty(const nlohmann::json& j, const char* key,
                          size_t max_bytes, const char* what);
// A whole number in [lo, hi]; absent or null gives nullopt.
std::optional<int64_t> optional_integer(const nlohmann::json& j,
                                        const char* key, int64_t lo, int64_t hi,
                                        const char* what);

}  // namespace gd::api
