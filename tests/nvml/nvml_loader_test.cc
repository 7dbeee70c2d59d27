// Loading NVML where there is none, or where the file is not NVML: the
// source must say so through status()/error() and never crash.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "nvml/gpu_source.h"
#include "nvml/nvml_library.h"

namespace {

gd::GpuSource::Options library(std::string path) {
  gd::GpuSource::Options o;
  o.lib_path = std::move(path);
  return o;
}

TEST(NvmlLoader, MissingLibraryFileIsNoDriverWithPathAndReason) {
  const std::string path = "/nonexistent/dir/libnvidia-ml.so.1";
  gd::GpuSource c(library(path));
  EXPECT_EQ(c.status(), gd::kNvmlNoDriver);
  EXPECT_NE(c.error().find(path), std::string::npos) << c.error();
  // dlerror()'s own words are part of the message.
  EXPECT_NE(c.error().find("No such file"), std::string::npos) << c.error();
  EXPECT_FALSE(c.driver().has_value());
  EXPECT_TRUE(c.gpus().empty());
  std::vector<gd::Event> events;
  EXPECT_TRUE(c.sample(events).empty());
  EXPECT_TRUE(events.empty());
}

TEST(NvmlLoader, DefaultSonameOnAHostWithoutDriverIsNoDriver) {
  // This test machine has no NVIDIA driver; on one that has, the default
  // constructor must come up ok. Either way it must not crash or hang.
  gd::GpuSource c;
  if (c.status() == gd::kNvmlOk)
    GTEST_SKIP() << "an NVIDIA driver is installed";
  EXPECT_EQ(c.status(), gd::kNvmlNoDriver) << c.error();
  EXPECT_NE(c.error().find("libnvidia-ml.so.1"), std::string::npos)
      << c.error();
}

TEST(NvmlLoader, FileThatIsNotALibraryIsNoDriver) {
  const std::string path = ::testing::TempDir() + "/not_a_library.so.1";
  std::ofstream(path) << "this is not an ELF file\n";
  gd::GpuSource c(library(path));
  EXPECT_EQ(c.status(), gd::kNvmlNoDriver);
  EXPECT_NE(c.error().find(path), std::string::npos) << c.error();
  std::remove(path.c_str());
}

TEST(NvmlLoader, LibraryWithoutNvmlInitIsAnErrorNotACrash) {
  // libm is on every glibc system and exports no NVML symbol at all.
  gd::GpuSource c(library("libm.so.6"));
  EXPECT_EQ(c.status(), gd::kNvmlError);
  EXPECT_NE(c.error().find("nvmlInit"), std::string::npos) << c.error();
  EXPECT_TRUE(c.gpus().empty());
}

TEST(NvmlLoader, OpenReportsEveryMissingSymbolAsNull) {
  std::string error;
  auto lib = gd::nvml::NvmlLibrary::open("libm.so.6", &error);
  ASSERT_NE(lib, nullptr) << error;
  EXPECT_EQ(lib->fn().nvmlInit_v2, nullptr);
  EXPECT_EQ(lib->fn().nvmlDeviceGetComputeRunningProcesses_v3, nullptr);
  EXPECT_EQ(lib->fn().nvmlErrorString, nullptr);
  // Without nvmlErrorString the code still reads as something.
  EXPECT_EQ(lib->error_string(NVML_ERROR_GPU_IS_LOST), "NVML error 15");
}

TEST(NvmlLoader, InitReturnCodesMapToTraceStatuses) {
  using gd::nvml::init_status_for;
  EXPECT_STREQ(init_status_for(NVML_SUCCESS), "ok");
  EXPECT_STREQ(init_status_for(NVML_ERROR_LIBRARY_NOT_FOUND), "no_driver");
  EXPECT_STREQ(init_status_for(NVML_ERROR_DRIVER_NOT_LOADED), "no_driver");
  EXPECT_STREQ(init_status_for(NVML_ERROR_LIB_RM_VERSION_MISMATCH),
               "driver_library_mismatch");
  EXPECT_STREQ(init_status_for(NVML_ERROR_NO_PERMISSION),
               "insufficient_permissions");
  EXPECT_STREQ(init_status_for(NVML_ERROR_UNKNOWN), "error");
  EXPECT_STREQ(init_status_for(NVML_ERROR_IRQ_ISSUE), "error");
}

}  // namespace
