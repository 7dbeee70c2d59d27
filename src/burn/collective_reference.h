// The bus bandwidth an all-reduce reaches on known nodes: nccl-tests'
// all_reduce_perf busbw at large sizes (hundreds of MiB and up), as
// operators publish it for whole nodes. One table; a node it does not list
// is measured but not judged.
#pragma once

#include <optional>
#include <string>

namespace gd::burn {

struct BusReference {
  double low_bytes_per_s = 0, high_bytes_per_s = 0;
  std::string setup;   // "8 A100 SXM4 over NVLink 3"
  std::string source;  // where the figure comes from
};

// `model` is NVML's name ("NVIDIA A100-SXM4-80GB"), `gpus` the ranks,
// `link` "NVLink" or "PCIe" (every rank's GPU has NVLink, or none has).
std::optional<BusReference> bus_reference(const std::string& model, int gpus,
                                          const std::string& link);

// Below this share of the reference's low end the fabric is not delivering
// (the published guides' "more than 20% below: something is off").
inline constexpr double kBusFloorShare = 0.8;

}  // namespace gd::burn
