// The library exports the whole NVML API of a real nvml.h (generated stubs
// answer NOT_SUPPORTED), the old-API variant lacks the newer symbols, and
// concurrent callers are safe.
#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "nvml_client.h"

namespace fake_nvml_test {
namespace {

std::vector<std::string> bindings_functions() {
  std::ifstream in(FAKE_NVML_BINDINGS_LIST);
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) names.push_back(line);
  }
  return names;
}

TEST(Exports, EveryFunctionOfTheRealNvmlHeaderIsExported) {
  auto names = bindings_functions();
  // The reference is a prerequisite, not an option: without it this test
  // would check nothing, so it fails and says what to install.
  ASSERT_FALSE(names.empty())
      << "bindings.rs of nvml-wrapper-sys not found: install the Debian "
         "package librust-nvml-wrapper-sys-dev and re-run cmake";
  EXPECT_GE(names.size(), 250u);  // nvml-wrapper-sys 0.7 declares 295
  NvmlClient nvml(FAKE_NVML_LIB);
  for (const auto& n : names) EXPECT_NE(nvml.symbol(n.c_str()), nullptr) << n;
}

TEST(Exports, GeneratedStubExistsAndAnswersNotSupported) {
  NvmlClient nvml(FAKE_NVML_LIB);
  ScopedEnv scenario("FAKE_NVML_SCENARIO", FAKE_NVML_SCENARIO_4GPU);
  ASSERT_EQ(NVML_FN(nvml, nvmlInit_v2)(), NVML_SUCCESS);
  nvmlDevice_t d = nullptr;
  ASSERT_EQ(NVML_FN(nvml, nvmlDeviceGetHandleByIndex_v2)(0, &d), NVML_SUCCESS);
  char buf[64];
  auto vbios = nvml.fn<nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned)>(
      "nvmlDeviceGetVbiosVersion");
  EXPECT_EQ(vbios(d, buf, sizeof buf), NVML_ERROR_NOT_SUPPORTED);
  unsigned state = 0;
  auto nvlink = nvml.fn<nvmlReturn_t (*)(nvmlDevice_t, unsigned, unsigned*)>(
      "nvmlDeviceGetNvLinkState");
  EXPECT_EQ(nvlink(d, 0, &state), NVML_ERROR_NOT_SUPPORTED);
  NVML_FN(nvml, nvmlShutdown)();
}

TEST(Exports, OnlyNvmlSymbolsAreExported) {
  NvmlClient nvml(FAKE_NVML_LIB);
  // Engine internals are linked in but must stay local.
  EXPECT_EQ(nvml.symbol("fake_nvml_stub_call"), nullptr);
  EXPECT_EQ(nvml.symbol("_ZN9fake_nvml12error_stringEi"),
            nullptr);  // fake_nvml::error_string(int)
}

TEST(OldApiVariant, LacksTheNewerSymbolsButKeepsTheirFallbacks) {
  NvmlClient old_nvml(FAKE_NVML_OLD_LIB);
  for (const char* newer :
       {"nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetGraphicsRunningProcesses_v3",
        "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetCurrentClocksEventReasons",
        "nvmlSystemGetCudaDriverVersion_v2", "nvmlDeviceGetNumaNodeId",
        "nvmlDeviceGetFieldValues", "nvmlGpmSampleGet", "nvmlGpmMetricsGet",
        "nvmlGpmMigSampleGet", "nvmlDeviceGetGpuFabricInfo"}) {
    EXPECT_EQ(old_nvml.symbol(newer), nullptr) << newer;
  }
  ScopedEnv scenario("FAKE_NVML_SCENARIO", FAKE_NVML_SCENARIO_4GPU);
  ASSERT_EQ(NVML_FN(old_nvml, nvmlInit_v2)(), NVML_SUCCESS);
  nvmlDevice_t d = nullptr;
  ASSERT_EQ(NVML_FN(old_nvml, nvmlDeviceGetHandleByIndex_v2)(0, &d),
            NVML_SUCCESS);
  unsigned count = 0;
  EXPECT_EQ(NVML_FN(old_nvml, nvmlDeviceGetComputeRunningProcesses_v2)(
                d, &count, nullptr),
            NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 1u);
  nvmlMemory_t m{};
  EXPECT_EQ(NVML_FN(old_nvml, nvmlDeviceGetMemoryInfo)(d, &m), NVML_SUCCESS);
  unsigned long long reasons = 0;
  EXPECT_EQ(
      NVML_FN(old_nvml, nvmlDeviceGetCurrentClocksThrottleReasons)(d, &reasons),
      NVML_SUCCESS);
  int cuda = 0;
  EXPECT_EQ(NVML_FN(old_nvml, nvmlSystemGetCudaDriverVersion)(&cuda),
            NVML_SUCCESS);
  NVML_FN(old_nvml, nvmlShutdown)();
}

TEST(ThreadSafety, ConcurrentCallersAndInitShutdownAgree) {
  NvmlClient nvml(FAKE_NVML_LIB);
  ScopedEnv scenario("FAKE_NVML_SCENARIO", FAKE_NVML_SCENARIO_4GPU);
  ScopedEnv speed("FAKE_NVML_SPEED", "50");  // samples change under the readers
  ScopedEnv loop("FAKE_NVML_LOOP", "1");
  ASSERT_EQ(NVML_FN(nvml, nvmlInit_v2)(),
            NVML_SUCCESS);  // held for the whole test
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 2000; ++k) {
        if (t % 4 == 0) {  // some threads take and drop their own reference
          if (NVML_FN(nvml, nvmlInit_v2)() != NVML_SUCCESS) ++failures;
        }
        nvmlDevice_t d = nullptr;
        if (NVML_FN(nvml, nvmlDeviceGetHandleByIndex_v2)(k % 4, &d) !=
            NVML_SUCCESS)
          ++failures;
        nvmlMemory_t m{};
        if (NVML_FN(nvml, nvmlDeviceGetMemoryInfo)(d, &m) != NVML_SUCCESS ||
            m.used > m.total) {
          ++failures;
        }
        unsigned count = 8;
        nvmlProcessInfo_t infos[8];
        if (NVML_FN(nvml, nvmlDeviceGetComputeRunningProcesses_v3)(
                d, &count, infos) != NVML_SUCCESS) {
          ++failures;
        }
        if (t % 4 == 0 && NVML_FN(nvml, nvmlShutdown)() != NVML_SUCCESS)
          ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(NVML_FN(nvml, nvmlShutdown)(), NVML_SUCCESS);
  EXPECT_EQ(NVML_FN(nvml, nvmlShutdown)(),
            NVML_ERROR_UNINITIALIZED);  // counts balanced
}

}  // namespace
}  // namespace fake_nvml_test
