// driver, kernel-module, cuda-runtime.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checklist_fixture.h"

namespace gd::test {
namespace {

using ::testing::HasSubstr;

TEST(DriverCheck, PassesWithMatchingNvml) {
  auto h = healthy_header();
  auto s = healthy_sample();
  CheckContext ctx(h, s, "/nonexistent", "/nonexistent");
  auto items = run_check(ctx, "driver");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "driver 535.129.03, NVML 12.535.129.03, CUDA 12.2");
}

TEST(DriverCheck, WarnsWhenNvmlBelongsToAnotherRelease) {
  auto h = healthy_header();
  h.driver->nvml_version = "12.550.54.14";
  auto s = healthy_sample();
  CheckContext ctx(h, s, "/nonexistent", "/nonexistent");
  auto items = run_check(ctx, "driver");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);
  EXPECT_THAT(items[0].detail, HasSubstr("libnvidia-ml.so.1"));
}

TEST(DriverCheck, FailsOnDriverLibraryMismatchAndSkipsWithoutDriver) {
  TraceHeader h;
  h.nvml_status = kNvmlDriverMismatch;
  Sample s;
  CheckContext ctx(h, s, "/nonexistent", "/nonexistent");
  auto items = run_check(ctx, "driver");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kFail);
  EXPECT_THAT(items[0].detail, HasSubstr("reboot"));

  h.nvml_status = kNvmlNoDriver;
  items = run_check(ctx, "driver");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kSkip);
  EXPECT_EQ(items[0].detail, "no NVIDIA driver");
}

TEST(KernelModuleCheck, PassesWhenModuleMatchesLibrary) {
  ChecklistTree tree("healthy");
  auto items = run_on_healthy_gpus(tree, "kernel-module");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "module 535.129.03 = NVML library");
}

TEST(KernelModuleCheck, FailsWhenOpenModuleDiffersFromLibrary) {
  ChecklistTree tree("misconfigured");
  auto items = run_on_healthy_gpus(tree, "kernel-module");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kFail);
  EXPECT_EQ(items[0].value, "module 550.54.14, NVML library 535.129.03");
}

TEST(KernelModuleCheck, NamesModuleWhenNvmlRefusesOrIsMissing) {
  ChecklistTree tree("misconfigured");
  TraceHeader h;
  h.nvml_status = kNvmlDriverMismatch;
  Sample s;
  CheckContext ctx(h, s, tree.proc(), tree.sys());
  auto items = run_check(ctx, "kernel-module");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kFail);
  EXPECT_THAT(items[0].value, HasSubstr("550.54.14"));

  h.nvml_status = kNvmlNoDriver;  // module loaded, user-space library missing
  items = run_check(ctx, "kernel-module");
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);

  tree.remove("proc/driver");  // no module either
  items = run_check(ctx, "kernel-module");
  EXPECT_EQ(items[0].status, CheckStatus::kSkip);
  EXPECT_THAT(items[0].detail, HasSubstr("no NVIDIA driver"));
}

TEST(CudaRuntimeCheck, PassesForOlderRuntime) {
  auto h = healthy_header();
  auto s = healthy_sample();
  CheckContext ctx(h, s, "/nonexistent", "/nonexistent");
  auto items = run_check(ctx, "cuda-runtime");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value,
            "runtime 12.1 (python (pid 4242)), driver supports 12.2");
}

TEST(CudaRuntimeCheck, WarnsForNewerMinorAndFailsForNewerMajor) {
  auto h = healthy_header();
  auto s = healthy_sample();
  s.processes[0].libs = {"libcudart.so.12.4.99"};
  CheckContext ctx(h, s, "/nonexistent", "/nonexistent");
  auto items = run_check(ctx, "cuda-runtime");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);
  EXPECT_THAT(items[0].value, HasSubstr("runtime 12.4"));

  s.processes[0].libs = {"libcudart.so.13.0.48"};
  items = run_check(ctx, "cuda-runtime");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kFail);
  EXPECT_THAT(items[0].detail, HasSubstr("CUDA 12.x"));
}

// PyTorch from pip maps its own hashed copy of the runtime; the check
// skipped it as "no GPU process maps a versioned libcudart".
TEST(CudaRuntimeCheck, ReadsThePipWheelRuntimeOfPytorch) {
  auto h = healthy_header();
  auto s = healthy_sample();
  s.processes[0].libs = {"libcudart-d0da41ae.so.12.4"};
  CheckContext ctx(h, s, "/nonexistent", "/nonexistent");
  auto items = run_check(ctx, "cuda-runtime");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);
  EXPECT_EQ(items[0].value,
            "runtime 12.4 (python (pid 4242)), driver supports 12.2");
}

TEST(CudaRuntimeCheck, SkipsWithoutGpuProcessesOrDriver) {
  auto h = healthy_header();
  auto s = healthy_sample();
  s.gpus[0].processes->clear();
  CheckContext ctx(h, s, "/nonexistent", "/nonexistent");
  auto items = run_check(ctx, "cuda-runtime");
  EXPECT_EQ(items[0].status, CheckStatus::kSkip);
  EXPECT_EQ(items[0].detail, "no GPU processes");

  TraceHeader none;
  none.nvml_status = kNvmlNoDriver;
  CheckContext ctx2(none, s, "/nonexistent", "/nonexistent");
  items = run_check(ctx2, "cuda-runtime");
  EXPECT_EQ(items[0].detail, "no NVIDIA driver");
}

}  // namespace
}  // namespace gd::test
