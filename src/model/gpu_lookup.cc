#include "model/gpu_lookup.h"

#include <algorithm>
#include <charconv>

#include "common/pci_bus_id.h"

namespace gd {
namespace {

// A host has at most a few dozen GPUs; more digits are no index.
constexpr size_t kMaxIndexDigits = 4;
constexpr std::string_view kDevicePrefix = "/dev/nvidia";

std::optional<int> small_number(std::string_view s) {
  if (s.empty() || s.size() > kMaxIndexDigits ||
      !std::all_of(s.begin(), s.end(),
                   [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  int n = 0;
  std::from_chars(s.data(), s.data() + s.size(), n);
  return n;
}

bool same_ascii_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto lower = [](char c) {
             return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
           };
           return lower(x) == lower(y);
         });
}

bool is_uuid_shape(std::string_view s) {
  return s.size() > 4 && s.size() <= 80 &&
         same_ascii_ignoring_case(s.substr(0, 4), "GPU-");
}

}  // namespace

std::string check_gpu_name(std::string_view name) {
  if (small_number(name) || is_uuid_shape(name) || canonical_pci_bus_id(name))
    return "";
  if (name.starts_with(kDevicePrefix) &&
      small_number(name.substr(kDevicePrefix.size())))
    return "";
  return "'" + std::string(name.substr(0, 80)) +
         "' is neither a GPU index, a GPU UUID (GPU-...), a PCI address "
         "(0000:1a:00.0) nor a device file (/dev/nvidiaN)";
}

std::optional<int> gpu_index_of(std::string_view name) {
  return small_number(name);
}

std::optional<int> gpu_by_name(const TraceHeader& header,
                               std::string_view name) {
  if (auto index = small_number(name)) {
    if (find_gpu_info(header, *index)) return index;
    return std::nullopt;
  }
  if (name.starts_with(kDevicePrefix)) {
    auto minor = small_number(name.substr(kDevicePrefix.size()));
    for (const auto& g : header.gpus)
      if (minor && g.minor_number == *minor) return g.index;
    return std::nullopt;
  }
  if (auto asked = canonical_pci_bus_id(name)) {
    for (const auto& g : header.gpus)
      if (canonical_pci_bus_id(g.pci_bus_id) == asked) return g.index;
    return std::nullopt;
  }
  if (!is_uuid_shape(name)) return std::nullopt;
  for (const auto& g : header.gpus)
    if (same_ascii_ignoring_case(g.uuid, name)) return g.index;
  return std::nullopt;
}

}  // namespace gd
