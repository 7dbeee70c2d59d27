// The readings added with the model's "additions to version 1", through the
// fake's C ABI: every value of the scenario comes back in NVML's form, an
// unknown one answers NOT_SUPPORTED, the recovery action follows the trace,
// and a GPU can drop out of enumeration (gone_after_s).
#include <chrono>
#include <thread>

#include "nvml_client.h"

namespace fake_nvml_test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// GPU 0 knows every new field; GPU 1 knows none of them.
json health_header() {
  json h = basic_header(2);
  h["gpus"][0].update({{"minor_number", 5},
                       {"temp_max_operating_c", 87},
                       {"temp_mem_max_c", 95},
                       {"bar1_total_bytes", 137438953472ULL},
                       {"vbios_version", "96.00.89.00.01"}});
  return h;
}

json health_sample(double t, const char* recovery_action) {
  json s = util_sample(t, 2, 50);
  s["gpus"][0].update(
      {{"mem_reserved_bytes", 659554304ULL},
       {"bar1_used_bytes", 4194304ULL},
       {"ecc_sbe_aggregate_total", 120},
       {"ecc_dbe_aggregate_total", 3},
       {"ecc_sram_correctable_aggregate_total", 20},
       {"ecc_sram_uncorrectable_aggregate_total", 2},
       {"ecc_dram_correctable_aggregate_total", 100},
       {"ecc_dram_uncorrectable_aggregate_total", 1},
       {"ecc_sram_correctable_volatile_total", 4},
       {"ecc_sram_uncorrectable_volatile_total", 1},
       {"ecc_dram_correctable_volatile_total", 7},
       {"ecc_dram_uncorrectable_volatile_total", 0},
       {"ecc_sram_threshold_exceeded", true},
       {"remapped_rows_pending", true},
       {"remapped_rows_failure", false},
       {"remapped_rows_correctable_total", 6},
       {"remapped_rows_uncorrectable_total", 2},
       {"row_remap_histogram",
        {{"max", 630}, {"high", 8}, {"partial", 1}, {"low", 1}, {"none", 0}}},
       {"recovery_action", recovery_action},
       {"temp_limit_margin_c", 18}});
  return s;
}

class HealthGetters : public ::testing::Test {
 protected:
  void start(const json& header, const std::vector<json>& samples,
             const char* speed) {
    scenario_.emplace("FAKE_NVML_SCENARIO",
                      write_scenario("health.jsonl", header, samples));
    speed_.emplace("FAKE_NVML_SPEED", speed);
    ASSERT_EQ(NVML_FN(nvml_, nvmlInit_v2)(), NVML_SUCCESS);
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetHandleByIndex_v2)(0, &d0_),
              NVML_SUCCESS);
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetHandleByIndex_v2)(1, &d1_),
              NVML_SUCCESS);
  }
  void start_still() {  // time slowed down: the first sample stays
    start(health_header(), {health_sample(0, "none")}, "0.000001");
  }
  void TearDown() override { NVML_FN(nvml_, nvmlShutdown)(); }

  nvmlReturn_t recovery_action(nvmlDevice_t d, unsigned& out) {
    nvmlFieldValue_t v{};
    v.fieldId = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION;
    nvmlReturn_t rc = NVML_FN(nvml_, nvmlDeviceGetFieldValues)(d, 1, &v);
    if (rc != NVML_SUCCESS) return rc;
    if (v.nvmlReturn == NVML_SUCCESS) out = v.value.uiVal;
    return v.nvmlReturn;
  }

  std::optional<ScopedEnv> scenario_, speed_;
  NvmlClient nvml_{FAKE_NVML_LIB};
  nvmlDevice_t d0_ = nullptr, d1_ = nullptr;
};

TEST_F(HealthGetters, StaticFactsComeFromTheHeader) {
  start_still();
  unsigned u = 0;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetMinorNumber)(d0_, &u), NVML_SUCCESS);
  EXPECT_EQ(u, 5u);
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetTemperatureThreshold)(
                d0_, NVML_TEMPERATURE_THRESHOLD_GPU_MAX, &u),
            NVML_SUCCESS);
  EXPECT_EQ(u, 87u);
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetTemperatureThreshold)(
                d0_, NVML_TEMPERATURE_THRESHOLD_MEM_MAX, &u),
            NVML_SUCCESS);
  EXPECT_EQ(u, 95u);
  char vbios[NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE];
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetVbiosVersion)(d0_, vbios, sizeof vbios),
            NVML_SUCCESS);
  EXPECT_STREQ(vbios, "96.00.89.00.01");
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetVbiosVersion)(d0_, vbios, 4),
            NVML_ERROR_INSUFFICIENT_SIZE);
  nvmlBAR1Memory_t bar1{};
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetBAR1MemoryInfo)(d0_, &bar1),
            NVML_SUCCESS);
  EXPECT_EQ(bar1.bar1Total, 137438953472ULL);
  EXPECT_EQ(bar1.bar1Used, 4194304ULL);
  EXPECT_EQ(bar1.bar1Free, 137438953472ULL - 4194304ULL);

  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetMinorNumber)(d1_, &u),
            NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetVbiosVersion)(d1_, vbios, sizeof vbios),
            NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetBAR1MemoryInfo)(d1_, &bar1),
            NVML_ERROR_NOT_SUPPORTED);
}

TEST_F(HealthGetters, EccCountersByTypeCounterAndLocation) {
  start_still();
  unsigned long long n = 0;
  auto total = [&](nvmlDevice_t d, nvmlMemoryErrorType_t t,
                   nvmlEccCounterType_t c) {
    return NVML_FN(nvml_, nvmlDeviceGetTotalEccErrors)(d, t, c, &n);
  };
  ASSERT_EQ(total(d0_, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC),
            NVML_SUCCESS);
  EXPECT_EQ(n, 120u);
  ASSERT_EQ(total(d0_, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC),
            NVML_SUCCESS);
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(total(d1_, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC),
            NVML_ERROR_NOT_SUPPORTED);

  struct Want {
    nvmlMemoryErrorType_t type;
    nvmlEccCounterType_t counter;
    nvmlMemoryLocation_t location;
    unsigned long long value;
  };
  const Want wants[] = {
      {NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC,
       NVML_MEMORY_LOCATION_SRAM, 20},
      {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC,
       NVML_MEMORY_LOCATION_SRAM, 2},
      {NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC,
       NVML_MEMORY_LOCATION_DRAM, 100},
      {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC,
       NVML_MEMORY_LOCATION_DRAM, 1},
      {NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC,
       NVML_MEMORY_LOCATION_SRAM, 4},
      {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
       NVML_MEMORY_LOCATION_SRAM, 1},
      {NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC,
       NVML_MEMORY_LOCATION_DRAM, 7},
      {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
       NVML_MEMORY_LOCATION_DRAM, 0},
  };
  auto counter = NVML_FN(nvml_, nvmlDeviceGetMemoryErrorCounter);
  for (const Want& w : wants) {
    n = 999;
    ASSERT_EQ(counter(d0_, w.type, w.counter, w.location, &n), NVML_SUCCESS)
        << w.type << "/" << w.counter << "/" << w.location;
    EXPECT_EQ(n, w.value) << w.type << "/" << w.counter << "/" << w.location;
    EXPECT_EQ(counter(d1_, w.type, w.counter, w.location, &n),
              NVML_ERROR_NOT_SUPPORTED);
  }
  EXPECT_EQ(counter(d0_, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC,
                    NVML_MEMORY_LOCATION_L2_CACHE, &n),
            NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(counter(d0_, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC,
                    NVML_MEMORY_LOCATION_COUNT, &n),
            NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(HealthGetters, SramStatusChecksTheStructVersion) {
  start_still();
  nvmlEccSramErrorStatus_t st{};
  st.version = nvmlEccSramErrorStatus_v1;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetSramEccErrorStatus)(d0_, &st),
            NVML_SUCCESS);
  EXPECT_EQ(st.version, nvmlEccSramErrorStatus_v1);
  EXPECT_EQ(st.bThresholdExceeded, 1u);
  EXPECT_EQ(st.aggregateCor, 20u);
  EXPECT_EQ(st.aggregateUncParity + st.aggregateUncSecDed, 2u);
  EXPECT_EQ(st.volatileCor, 4u);
  EXPECT_EQ(st.volatileUncParity + st.volatileUncSecDed, 1u);
  st.version = 0;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetSramEccErrorStatus)(d0_, &st),
            NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  st.version = nvmlEccSramErrorStatus_v1;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetSramEccErrorStatus)(d1_, &st),
            NVML_ERROR_NOT_SUPPORTED);
}

TEST_F(HealthGetters, RemappedRowsHistogramMarginAndReservedMemory) {
  start_still();
  unsigned corr = 0, unc = 0, pending = 0, failure = 1;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetRemappedRows)(d0_, &corr, &unc,
                                                      &pending, &failure),
            NVML_SUCCESS);
  EXPECT_EQ(corr, 6u);
  EXPECT_EQ(unc, 2u);
  EXPECT_EQ(pending, 1u);
  EXPECT_EQ(failure, 0u);

  nvmlRowRemapperHistogramValues_t h{};
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetRowRemapperHistogram)(d0_, &h),
            NVML_SUCCESS);
  EXPECT_EQ(h.max, 630u);
  EXPECT_EQ(h.high, 8u);
  EXPECT_EQ(h.partial, 1u);
  EXPECT_EQ(h.low, 1u);
  EXPECT_EQ(h.none, 0u);
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetRowRemapperHistogram)(d1_, &h),
            NVML_ERROR_NOT_SUPPORTED);

  nvmlMarginTemperature_t m{};
  m.version = nvmlMarginTemperature_v1;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetMarginTemperature)(d0_, &m),
            NVML_SUCCESS);
  EXPECT_EQ(m.marginTemperature, 18);
  m.version = 0;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetMarginTemperature)(d0_, &m),
            NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  m.version = nvmlMarginTemperature_v1;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetMarginTemperature)(d1_, &m),
            NVML_ERROR_NOT_SUPPORTED);

  nvmlMemory_v2_t mem{};
  mem.version = nvmlMemory_v2;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetMemoryInfo_v2)(d0_, &mem),
            NVML_SUCCESS);
  EXPECT_EQ(mem.reserved, 659554304ULL);
}

TEST_F(HealthGetters, RecoveryActionFollowsTheTrace) {
  // 1 scenario s at speed 4 = 250 ms.
  start(health_header(),
        {health_sample(0, "none"), health_sample(1, "drain_and_reset")}, "4");
  auto t0 = std::chrono::steady_clock::now();
  unsigned action = 99;
  ASSERT_EQ(recovery_action(d0_, action), NVML_SUCCESS);
  EXPECT_EQ(action, static_cast<unsigned>(NVML_GPU_RECOVERY_ACTION_NONE));
  EXPECT_EQ(recovery_action(d1_, action), NVML_ERROR_NOT_SUPPORTED);
  std::this_thread::sleep_until(t0 + 400ms);
  ASSERT_EQ(recovery_action(d0_, action), NVML_SUCCESS);
  EXPECT_EQ(action,
            static_cast<unsigned>(NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET));
}

TEST_F(HealthGetters, GoneGpuDropsOutOfEnumeration) {
  // GPU 1 falls off the bus at 0.5 scenario s (speed 2: 250 ms).
  json h = health_header();
  h["faults"] = json::array({{{"gpu", 1}, {"gone_after_s", 0.5}}});
  start(h, {health_sample(0, "none")}, "2");
  auto t0 = std::chrono::steady_clock::now();
  unsigned count = 0;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetCount_v2)(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 2u);
  std::this_thread::sleep_until(t0 + 400ms);
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetCount_v2)(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 1u);
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetCount)(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 1u);
  nvmlDevice_t again = nullptr;
  EXPECT_NE(NVML_FN(nvml_, nvmlDeviceGetHandleByIndex_v2)(1, &again),
            NVML_SUCCESS);
  unsigned temp = 0;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetTemperature)(d1_, NVML_TEMPERATURE_GPU,
                                                     &temp),
            NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetTemperature)(d0_, NVML_TEMPERATURE_GPU,
                                                     &temp),
            NVML_SUCCESS);
}

TEST_F(HealthGetters, PowerReadCanBeMadeToFail) {
  json h = health_header();
  h["faults"] = json::array({{{"function", "nvmlDeviceGetPowerUsage"},
                              {"gpu", 0},
                              {"return", "UNKNOWN"}}});
  start(h, {health_sample(0, "none")}, "0.000001");
  unsigned mw = 0;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetPowerUsage)(d0_, &mw),
            NVML_ERROR_UNKNOWN);
}

TEST(OldApiFake, LacksTheNewestHealthSymbols) {
  NvmlClient old(FAKE_NVML_OLD_LIB);
  EXPECT_EQ(old.symbol("nvmlDeviceGetMarginTemperature"), nullptr);
  EXPECT_EQ(old.symbol("nvmlDeviceGetSramEccErrorStatus"), nullptr);
  EXPECT_NE(old.symbol("nvmlDeviceGetMemoryErrorCounter"), nullptr);
}

}  // namespace
}  // namespace fake_nvml_test
