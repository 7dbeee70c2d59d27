// The lines of `status` about a GPU's health beyond its gauges (the
// additions to version 1): lifetime ECC, the row remapper, NVML's recovery
// action, and nvidia-smi's ERR! for a field whose read failed.
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>

#include "model/sample.h"
#include "views/format.h"

namespace gd {

// nvidia-smi's marks: a field whose read failed is "ERR!", one that is
// unsupported or unknown is the project's unknown mark (kUnknown).
inline constexpr const char* kReadFailed = "ERR!";

// True when `field` (a trace name) is in the sample's read_errors.
bool read_failed(const GpuSample& s, std::string_view field);

// A sample value by its trace name: ERR! when its read failed.
template <typename T>
inline std::string value_of(const GpuSample& s, std::string_view field,
                            const std::optional<T>& v,
                            const char* spec = "{}") {
  if (!v && read_failed(s, field)) return kReadFailed;
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string(kUnknown);
}

// "     ECC lifetime ..." and "     remapped rows ..." lines; "" when the GPU
// reports none of it.
std::string memory_health_lines(const GpuSample& s);
// "     !! RECOVERY ACTION REQUIRED: ..." unless the action is none/unknown.
std::string recovery_line(const GpuSample& s);
// "     ERR! read failed ...: power_w, ..." when any read failed.
std::string read_errors_line(const GpuSample& s);

}  // namespace gd
