// nvml-driver-mismatch, persistence-mode-off, driver-cuda-mismatch.
#include <gtest/gtest.h>

#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

TEST(NvmlDriverMismatch, HeaderStatusMismatchIsCritical) {
  TraceHeader h = make_header(0);
  h.nvml_status = kNvmlDriverMismatch;
  h.driver.reset();
  h.nvml_error = "Driver/library version mismatch";
  auto samples = make_samples(5, 1.0, [](size_t, Sample&) {});
  auto r = run_diagnose(h, samples);
  auto f = with_id(r, "nvml-driver-mismatch");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "critical");
  EXPECT_TRUE(f[0].gpus.empty());
  EXPECT_TRUE(contains(f[0].evidence, "driver_library_mismatch"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "reboot")) << f[0].action;
  // Without NVML nothing about the (unknown) driver CUDA version is claimed.
  EXPECT_TRUE(with_id(r, "driver-cuda-mismatch").empty());
}

TEST(NvmlDriverMismatch, SilentWhenNvmlOkOrSimplyAbsent) {
  auto ok = make_header(1);
  auto absent = make_header(0);
  absent.nvml_status = kNvmlNoDriver;
  absent.driver.reset();
  auto samples = make_samples(5, 1.0, [](size_t, Sample&) {});
  EXPECT_TRUE(
      with_id(run_diagnose(ok, samples), "nvml-driver-mismatch").empty());
  EXPECT_TRUE(
      with_id(run_diagnose(absent, samples), "nvml-driver-mismatch").empty());
}

TEST(PersistenceModeOff, ListsTheGpusWithItOff) {
  auto h = make_header(4);
  h.gpus[1].persistence_mode = false;
  h.gpus[3].persistence_mode = false;
  h.gpus[2].persistence_mode.reset();  // unknown is not "off"
  auto f =
      with_id(run_diagnose(h, make_samples(3, 1.0, [](size_t, Sample&) {})),
              "persistence-mode-off");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "info");
  EXPECT_EQ(f[0].gpus, (std::vector<int>{1, 3}));
  EXPECT_TRUE(contains(f[0].evidence, "2 of 4 GPUs")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "nvidia-persistenced")) << f[0].action;
}

TEST(PersistenceModeOff, SilentWhenOnOrUnknown) {
  auto h = make_header(2);
  h.gpus[1].persistence_mode.reset();
  EXPECT_TRUE(
      with_id(run_diagnose(h, make_samples(3, 1.0, [](size_t, Sample&) {})),
              "persistence-mode-off")
          .empty());
}

// One process on GPU 0 that maps the given libraries.
std::vector<Sample> job_with_libs(std::vector<std::string> libs) {
  Jitter j;
  return make_samples(30, 1.0, [&](size_t, Sample& s) {
    auto g = busy_gpu(0, j);
    g.processes = std::vector<GpuProcess>{{4242, 60 * kGiB, "compute"}};
    s.gpus.push_back(g);
    s.processes.push_back(process(4242, "python", libs));
  });
}

TEST(DriverCudaMismatch, NewerMajorRuntimeIsCritical) {
  auto h = make_header(1);  // driver 535.129.03, CUDA 12.2
  auto f = with_id(
      run_diagnose(h, job_with_libs({"libcudart.so.13.0.48", "libcuda.so.1"})),
      "driver-cuda-mismatch");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "critical");
  EXPECT_EQ(f[0].gpus, std::vector<int>{0});
  EXPECT_EQ(f[0].pids, std::vector<uint32_t>{4242});
  EXPECT_TRUE(contains(f[0].evidence, "libcudart.so.13.0.48")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "supports CUDA up to 12.2"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "Upgrade the NVIDIA driver"))
      << f[0].action;
}

TEST(DriverCudaMismatch, NewerMinorUnderMinorVersionCompatibilityIsWarning) {
  auto h = make_header(1);
  auto f = with_id(run_diagnose(h, job_with_libs({"libcudart.so.12.4.99"})),
                   "driver-cuda-mismatch");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "warning");
  EXPECT_TRUE(contains(f[0].evidence, "minor version compatibility"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "PTX")) << f[0].action;
}

TEST(DriverCudaMismatch, NewerMinorBeforeCuda11IsCritical) {
  auto h = make_header(1);
  h.driver = DriverInfo{"418.87.00", "10.1", "10.418.87.00", "", ""};
  auto f = with_id(run_diagnose(h, job_with_libs({"libcudart.so.10.2.89"})),
                   "driver-cuda-mismatch");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "critical");
}

TEST(DriverCudaMismatch, SilentForSameOrOlderRuntimeAndPipWheelNames) {
  auto h = make_header(1);
  EXPECT_TRUE(with_id(run_diagnose(h, job_with_libs({"libcudart.so.12.2.140"})),
                      "driver-cuda-mismatch")
                  .empty());
  EXPECT_TRUE(
      with_id(run_diagnose(h, job_with_libs({"libcudart-d0da41ae.so.11.0"})),
              "driver-cuda-mismatch")
          .empty());
  // Major only in the name (pip nvidia-cuda-runtime-cu12): same major, silent.
  EXPECT_TRUE(with_id(run_diagnose(h, job_with_libs({"libcudart.so.12"})),
                      "driver-cuda-mismatch")
                  .empty());
}

TEST(DriverCudaMismatch, SilentWithForwardCompatibilityPackage) {
  auto h = make_header(1);
  auto samples =
      job_with_libs({"libcudart.so.12.8.57", "libcuda.so.570.124.06"});
  EXPECT_TRUE(
      with_id(run_diagnose(h, samples), "driver-cuda-mismatch").empty());
}

TEST(DriverCudaMismatch, PipWheelRuntimeNewerMajorIsCritical) {
  auto h = make_header(1);
  h.driver = DriverInfo{"470.223.02", "11.4", "11.470.223.02", "", ""};
  auto f = with_id(run_diagnose(h, job_with_libs({"libcudart-9335f6a2.so.12"})),
                   "driver-cuda-mismatch");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "critical");
}

}  // namespace
}  // namespace gd::test
