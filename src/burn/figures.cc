#include "burn/figures.h"

#include <fmt/format.h>

namespace gd::burn {

int fp32_lanes_per_sm(int major, int minor) {
  switch (major * 10 + minor) {
    case 60:
    case 70:
    case 72:
    case 75:
    case 80:
      return 64;
    case 61:
    case 62:
    case 86:
    case 87:
    case 89:
    case 90:
    case 100:
    case 103:
    case 120:
      return 128;
    default:
      return 0;
  }
}

std::optional<double> fp32_peak_gflops(int major, int minor, int sm_count,
                                       double clock_mhz) {
  const int lanes = fp32_lanes_per_sm(major, minor);
  if (!lanes || sm_count <= 0 || clock_mhz <= 0) return std::nullopt;
  return double(sm_count) * lanes * 2 * clock_mhz / 1e3;
}

std::optional<double> pcie_raw_bytes_per_s(int gen, int width) {
  static constexpr double kGtPerLane[] = {0, 2.5, 5, 8, 16, 32, 64};
  if (gen < 1 || gen > 6 || width < 1) return std::nullopt;
  // 8b/10b up to Gen2, 128b/130b for Gen3-5; Gen6's FLIT mode ~242/256.
  const double encoding = gen <= 2   ? 0.8
                          : gen <= 5 ? 128.0 / 130.0
                                     : 242.0 / 256.0;
  return kGtPerLane[gen] * 1e9 * width * encoding / 8;
}

std::optional<double> pcie_usable_bytes_per_s(int gen, int width) {
  auto raw = pcie_raw_bytes_per_s(gen, width);
  if (!raw) return std::nullopt;
  return *raw * 0.8;
}

std::string flops_text(double gflops) {
  if (gflops >= 1000) return fmt::format("{:.1f} TFLOP/s", gflops / 1000);
  return fmt::format("{:.0f} GFLOP/s", gflops);
}

std::string rate_text(double bps) {
  if (bps >= 1e12) return fmt::format("{:.2f} TB/s", bps / 1e12);
  if (bps >= 1e9) return fmt::format("{:.1f} GB/s", bps / 1e9);
  return fmt::format("{:.0f} MB/s", bps / 1e6);
}

}  // namespace gd::burn
