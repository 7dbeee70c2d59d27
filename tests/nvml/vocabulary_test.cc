// NVML codes -> the trace format's words and units.
#include <gtest/gtest.h>

#include <cstddef>

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
  EXPECT_EQ(compute_mode_name(9), "");
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

namespace {

TEST(NvmlVocabulary, RecoveryActionsUseTheTraceWords) {
  EXPECT_EQ(recovery_action_name(NVML_GPU_RECOVERY_ACTION_NONE), "none");
  EXPECT_EQ(recovery_action_name(NVML_GPU_RECOVERY_ACTION_GPU_RESET),
            "gpu_reset");
  EXPECT_EQ(recovery_action_name(NVML_GPU_RECOVERY_ACTION_NODE_REBOOT),
            "node_reboot");
  EXPECT_EQ(recovery_action_name(NVML_GPU_RECOVERY_ACTION_DRAIN_P2P),
            "drain_p2p");
  EXPECT_EQ(recovery_action_name(NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET),
            "drain_and_reset");
  EXPECT_EQ(recovery_action_name(5), "");  // newer than this build: unknown
}

// The versioned structs newer than the reference bindings: NVML's rule
// sizeof | version << 24, and the layouts NVML documents (r550 nvml.h).
TEST(NvmlNewerThanReference, VersionedStructsHaveNvmlsSizesAndVersions) {
  EXPECT_EQ(sizeof(nvmlMarginTemperature_v1_t), 8u);
  EXPECT_EQ(nvmlMarginTemperature_v1, 0x1000008u);
  EXPECT_EQ(sizeof(nvmlEccSramErrorStatus_v1_t), 104u);
  EXPECT_EQ(offsetof(nvmlEccSramErrorStatus_v1_t, aggregateUncParity), 8u);
  EXPECT_EQ(offsetof(nvmlEccSramErrorStatus_v1_t, bThresholdExceeded), 96u);
  EXPECT_EQ(nvmlEccSramErrorStatus_v1, 0x1000068u);
  EXPECT_EQ(NVML_FI_DEV_GET_GPU_RECOVERY_ACTION, 230);
}

TEST(NvmlLibraryVersion, ComesFromTheLoadedFilesName) {
  EXPECT_EQ(library_version_from_file_name(
                "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.104.05"),
            "535.104.05");
  EXPECT_EQ(library_version_from_file_name("libnvidia-ml.so.550.54.15"),
            "550.54.15");
  // The ABI number every driver shares is not a driver version.
  EXPECT_EQ(library_version_from_file_name("/lib/libnvidia-ml.so.1"), "");
  EXPECT_EQ(library_version_from_file_name("/lib/libnvidia-ml.so"), "");
  EXPECT_EQ(library_version_from_file_name("/tmp/libfoo.so.1.2.3"), "");
  EXPECT_EQ(library_version_from_file_name(""), "");
}

}  // namespace
