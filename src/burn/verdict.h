// One verdict per GPU from what its tests found (GPU side), what NVML and the
// kernel log said while it ran, how it compares with its identical peers and
// the model's figures, and the diagnosis rules' findings about it.
//
// fail: wrong results (compute errors, memory errors, copies that came back
//   different), a CUDA error or hang that stopped the GPU, uncorrectable ECC
//   (DBE), a failed row remap, a critical Xid, a lost GPU, a critical finding.
// warn: slower than identical peers or far below the model's peak, thermal or
//   hardware slowdown for a share of the run, a PCIe link below its maximum
//   under load or carrying far less than it should, corrected ECC errors or a
//   pending remap, a non-critical Xid, a warning finding.
// pass: none of these; the reasons then sum up the figures.
#pragma once

#include <vector>

#include "burn/burn.h"

namespace gd::burn {

// Thresholds (why each value: see verdict.cc).
inline constexpr double kPeerSlowerPct = 10;  // FP32 vs identical peers' median
inline constexpr double kPeerSlowerBandwidthPct = 15;
inline constexpr double kPeakFloorPct = 70;     // FP32 vs the model's peak
inline constexpr double kSlowdownSharePct = 5;  // thermal / HW slowdown
inline constexpr double kLinkFloorPct =
    60;  // copy rate vs the link's usable rate

// Fills verdict, reasons, notes, throttled_pct and fp32_expected_gflops of
// every GPU. `findings` are the diagnosis of the burn window.
void judge(std::vector<GpuVerdict>& gpus, const std::vector<Finding>& findings,
           const BurnReport& context);

}  // namespace gd::burn
