// nvmlInit/nvmlShutdown reference counting, UNINITIALIZED, error strings,
// and the ways nvmlInit fails.
#include <string>

#include "nvml_client.h"

namespace fake_nvml_test {
namespace {

class Init : public ::testing::Test {
 protected:
  NvmlClient nvml_{FAKE_NVML_LIB};
};

TEST_F(Init, CallsBeforeInitAreUninitialized) {
  ScopedEnv scenario("FAKE_NVML_SCENARIO", FAKE_NVML_SCENARIO_4GPU);
  unsigned count = 0;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetCount_v2)(&count),
            NVML_ERROR_UNINITIALIZED);
  char buf[80];
  EXPECT_EQ(NVML_FN(nvml_, nvmlSystemGetDriverVersion)(buf, sizeof buf),
            NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(NVML_FN(nvml_, nvmlShutdown)(), NVML_ERROR_UNINITIALIZED);
  // A generated stub, too.
  auto vbios = nvml_.fn<nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned)>(
      "nvmlDeviceGetVbiosVersion");
  EXPECT_EQ(vbios(nullptr, buf, sizeof buf), NVML_ERROR_UNINITIALIZED);
}

TEST_F(Init, InitIsReferenceCountedUntilTheLastShutdown) {
  ScopedEnv scenario("FAKE_NVML_SCENARIO", FAKE_NVML_SCENARIO_4GPU);
  auto count = [&] {
    unsigned n = 0;
    return NVML_FN(nvml_, nvmlDeviceGetCount_v2)(&n);
  };
  ASSERT_EQ(NVML_FN(nvml_, nvmlInit_v2)(), NVML_SUCCESS);
  ASSERT_EQ(NVML_FN(nvml_, nvmlInit)(), NVML_SUCCESS);
  ASSERT_EQ(nvml_.fn<nvmlReturn_t (*)(unsigned)>("nvmlInitWithFlags")(0),
            NVML_SUCCESS);
  EXPECT_EQ(NVML_FN(nvml_, nvmlShutdown)(), NVML_SUCCESS);
  EXPECT_EQ(count(), NVML_SUCCESS);
  EXPECT_EQ(NVML_FN(nvml_, nvmlShutdown)(), NVML_SUCCESS);
  EXPECT_EQ(count(), NVML_SUCCESS);
  EXPECT_EQ(NVML_FN(nvml_, nvmlShutdown)(),
            NVML_SUCCESS);  // the third, last one
  EXPECT_EQ(count(), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(NVML_FN(nvml_, nvmlShutdown)(), NVML_ERROR_UNINITIALIZED);
}

TEST_F(Init, ErrorStringsAreNvmlsTexts) {
  auto str = [&](nvmlReturn_t rc) {
    return std::string(NVML_FN(nvml_, nvmlErrorString)(rc));
  };
  // Works without init, like the real one.
  EXPECT_EQ(str(NVML_SUCCESS), "Success");
  EXPECT_EQ(str(NVML_ERROR_UNINITIALIZED), "Uninitialized");
  EXPECT_EQ(str(NVML_ERROR_INVALID_ARGUMENT), "Invalid Argument");
  EXPECT_EQ(str(NVML_ERROR_NOT_SUPPORTED), "Not Supported");
  EXPECT_EQ(str(NVML_ERROR_NO_PERMISSION), "Insufficient Permissions");
  EXPECT_EQ(str(NVML_ERROR_NOT_FOUND), "Not Found");
  EXPECT_EQ(str(NVML_ERROR_INSUFFICIENT_SIZE), "Insufficient Size");
  EXPECT_EQ(str(NVML_ERROR_DRIVER_NOT_LOADED), "Driver Not Loaded");
  EXPECT_EQ(str(NVML_ERROR_TIMEOUT), "Timeout");
  EXPECT_EQ(str(NVML_ERROR_FUNCTION_NOT_FOUND), "Function Not Found");
  EXPECT_EQ(str(NVML_ERROR_GPU_IS_LOST), "GPU is lost");
  EXPECT_EQ(str(NVML_ERROR_LIB_RM_VERSION_MISMATCH),
            "Driver/library version mismatch");
  EXPECT_EQ(str(NVML_ERROR_UNKNOWN), "Unknown Error");
  EXPECT_EQ(str(static_cast<nvmlReturn_t>(12345)), "Unknown Error");
  // Every code NVML defines has its own text.
  for (int rc = 1; rc <= 27; ++rc) {
    EXPECT_NE(str(static_cast<nvmlReturn_t>(rc)), "Unknown Error") << rc;
  }
}

TEST_F(Init, WithoutScenarioInitFailsAsDriverNotLoaded) {
  unsetenv("FAKE_NVML_SCENARIO");
  EXPECT_EQ(NVML_FN(nvml_, nvmlInit_v2)(), NVML_ERROR_DRIVER_NOT_LOADED);
}

TEST_F(Init, UnreadableScenarioFailsInitWithUnknownError) {
  std::string path = write_scenario("bad.jsonl", basic_header(1), {});
  std::ofstream(path) << "this is not a trace\n";
  ScopedEnv scenario("FAKE_NVML_SCENARIO", path);
  EXPECT_EQ(NVML_FN(nvml_, nvmlInit_v2)(), NVML_ERROR_UNKNOWN);
}

TEST_F(Init, InitReturnFaultFailsInitWithThatCode) {
  for (const auto& [name, code] :
       std::vector<std::pair<std::string, nvmlReturn_t>>{
           {"LIB_RM_VERSION_MISMATCH", NVML_ERROR_LIB_RM_VERSION_MISMATCH},
           {"DRIVER_NOT_LOADED", NVML_ERROR_DRIVER_NOT_LOADED},
           {"NVML_ERROR_NO_PERMISSION", NVML_ERROR_NO_PERMISSION}}) {
    auto header = basic_header(2);
    header["faults"] = {{{"init_return", name}}};
    ScopedEnv scenario("FAKE_NVML_SCENARIO",
                       write_scenario("init_" + name + ".jsonl", header,
                                      {util_sample(0, 2, 5)}));
    EXPECT_EQ(NVML_FN(nvml_, nvmlInit_v2)(), code) << name;
    unsigned n = 0;
    EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetCount_v2)(&n),
              NVML_ERROR_UNINITIALIZED);
  }
}

TEST_F(Init, HeaderNvmlStatusMismatchFailsInitLikeTheRealDriver) {
  auto header = basic_header(0);
  header["nvml_status"] = "driver_library_mismatch";
  header["driver"] = nullptr;
  ScopedEnv scenario("FAKE_NVML_SCENARIO",
                     write_scenario("mismatch.jsonl", header, {}));
  nvmlReturn_t rc = NVML_FN(nvml_, nvmlInit_v2)();
  EXPECT_EQ(rc, NVML_ERROR_LIB_RM_VERSION_MISMATCH);
  EXPECT_STREQ(NVML_FN(nvml_, nvmlErrorString)(rc),
               "Driver/library version mismatch");
}

}  // namespace
}  // namespace fake_nvml_test
