// Figures burn compares against, and how its reasons write them.
#pragma once

#include <optional>
#include <string>

namespace gd::burn {

// FP32 lanes per SM of a compute capability (CUDA programming guide,
// arithmetic instruction throughput); 0 when unknown.
int fp32_lanes_per_sm(int cc_major, int cc_minor);
// Peak FP32 GFLOP/s: SMs x lanes x 2 (an FMA) x clock; nullopt when unknown.
std::optional<double> fp32_peak_gflops(int cc_major, int cc_minor, int sm_count,
                                       double clock_mhz);

// Raw rate of a PCIe link, bytes/s (GT/s per lane x width x encoding / 8):
// Gen4 x16 = 31.5 GB/s. nullopt for an unknown generation.
std::optional<double> pcie_raw_bytes_per_s(int gen, int width);
// What pinned copies get over it in practice (~80% of raw: packet
// overhead): Gen4 x16 ~25 GB/s.
std::optional<double> pcie_usable_bytes_per_s(int gen, int width);

// "18.9 TFLOP/s", "950 GFLOP/s".
std::string flops_text(double gflops);
// "25.2 GB/s", "1.63 TB/s", "812 MB/s" (decimal units, as links and memory
// are specified).
std::string rate_text(double bytes_per_s);

}  // namespace gd::burn
