// NVML codes -> the trace format's words and units.
#include <gtest/gtest.h>

#include "nvml/device_reader.h"

namespace {

using namespace gd::nvml;

TEST(NvmlVocabulary, ArchitectureIdsNameTheGeneration) {
  EXPECT_EQ(architecture_name(NVML_DEVICE_ARCH_KEPLER), "kepler");
  EXPECT_EQ(architecture_name(NVML_DEVICE_ARCH_VOLTA), "volta");
  EXPECT_EQ(architecture_name(NVML_DEVICE_ARCH_AMPERE), "ampere");
  EXPECT_EQ(architecture_name(NVML_DEVICE_ARCH_ADA), "ada");
  EXPECT_EQ(architecture_name(NVML_DEVICE_ARCH_HOPPER), "hopper");
  EXPECT_EQ(architecture_name(NVML_DEVICE_ARCH_BLACKWELL), "blackwell");
  EXPECT_EQ(architecture_name(NVML_DEVICE_ARCH_UNKNOWN),
            "");  // unknown, not a guess
  EXPECT_EQ(architecture_name(77), "");
}

TEST(NvmlVocabulary, ComputeModesUseTheTraceWords) {
  EXPECT_EQ(compute_mode_name(NVML_COMPUTEMODE_DEFAULT), "default");
  EXPECT_EQ(compute_mode_name(NVML_COMPUTEMODE_EXCLUSIVE_PROCESS),
            "exclusive_process");
  EXPECT_EQ(compute_mode_name(NVML_COMPUTEMODE_PROHIBITED), "prohibited");
  EXPECT_EQ(compute_mode_name(static_cast<nvmlComputeMode_t>(9)), "");
}

TEST(NvmlVocabulary, ClockEventReasonBitsBecomeNamesInBitOrder) {
  EXPECT_TRUE(clock_event_reason_names(0).empty());  // none active
  EXPECT_EQ(clock_event_reason_names(nvmlClocksThrottleReasonSwPowerCap |
                                     nvmlClocksThrottleReasonHwThermalSlowdown),
            (std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"}));
  EXPECT_EQ(clock_event_reason_names(0x1FF).size(),
            9u);  // every documented bit
  // Bits NVML may add later are not invented into names.
  EXPECT_TRUE(clock_event_reason_names(1ULL << 40).empty());
}

TEST(NvmlVocabulary, CudaDriverVersionIntegerBecomesMajorDotMinor) {
  EXPECT_EQ(cuda_version_string(12020), "12.2");
  EXPECT_EQ(cuda_version_string(11080), "11.8");
  EXPECT_EQ(cuda_version_string(12000), "12.0");
  EXPECT_EQ(cuda_version_string(0), "");
}

}  // namespace
