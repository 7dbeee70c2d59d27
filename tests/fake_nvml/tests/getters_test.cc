// Every modelled getter answers the value of the 4-GPU scenario (first
// sample: time is slowed down so that it stays there), with NVML's units.
#include <cmath>
#include <cstring>
#include <string>

#include "nvml_client.h"

namespace fake_nvml_test {
namespace {

using nlohmann::json;

class ScenarioGetters : public ::testing::Test {
 protected:
  void SetUp() override {
    lines_ = read_jsonl(FAKE_NVML_SCENARIO_4GPU);
    ASSERT_GE(lines_.size(), 4u);
    ASSERT_EQ(NVML_FN(nvml_, nvmlInit_v2)(), NVML_SUCCESS);
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetCount_v2)(&count_), NVML_SUCCESS);
  }
  void TearDown() override {
    EXPECT_EQ(NVML_FN(nvml_, nvmlShutdown)(), NVML_SUCCESS);
  }

  const json& header() const { return lines_[0]; }
  const json& gpu_info(unsigned i) const { return header()["gpus"][i]; }
  const json& gpu_sample(unsigned i) const { return lines_[1]["gpus"][i]; }
  nvmlDevice_t device(unsigned i) {
    nvmlDevice_t d = nullptr;
    EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetHandleByIndex_v2)(i, &d),
              NVML_SUCCESS);
    return d;
  }

  ScopedEnv scenario_{"FAKE_NVML_SCENARIO", FAKE_NVML_SCENARIO_4GPU};
  ScopedEnv speed_{"FAKE_NVML_SPEED", "0.000001"};  // stay on the first sample
  NvmlClient nvml_{FAKE_NVML_LIB};
  std::vector<json> lines_;
  unsigned count_ = 0;
};

TEST_F(ScenarioGetters, DeviceCountIsTheNumberOfHeaderGpus) {
  EXPECT_EQ(count_, header()["gpus"].size());
  unsigned plain = 0;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetCount)(&plain), NVML_SUCCESS);
  EXPECT_EQ(plain, count_);
}

TEST_F(ScenarioGetters, DriverNvmlAndCudaVersionsComeFromTheHeader) {
  const json& driver = header()["driver"];
  char buf[96];
  ASSERT_EQ(NVML_FN(nvml_, nvmlSystemGetDriverVersion)(buf, sizeof buf),
            NVML_SUCCESS);
  EXPECT_EQ(std::string(buf), driver["driver_version"].get<std::string>());
  ASSERT_EQ(NVML_FN(nvml_, nvmlSystemGetNVMLVersion)(buf, sizeof buf),
            NVML_SUCCESS);
  EXPECT_EQ(std::string(buf), driver["nvml_version"].get<std::string>());

  int major = 0, minor = 0;
  ASSERT_EQ(
      std::sscanf(driver["cuda_driver_version"].get<std::string>().c_str(),
                  "%d.%d", &major, &minor),
      2);
  int cuda = 0;
  ASSERT_EQ(NVML_FN(nvml_, nvmlSystemGetCudaDriverVersion_v2)(&cuda),
            NVML_SUCCESS);
  EXPECT_EQ(cuda, major * 1000 + minor * 10);
  cuda = 0;
  ASSERT_EQ(NVML_FN(nvml_, nvmlSystemGetCudaDriverVersion)(&cuda),
            NVML_SUCCESS);
  EXPECT_EQ(cuda, major * 1000 + minor * 10);
}

TEST_F(ScenarioGetters, StringBufferOneByteTooSmallIsInsufficientSize) {
  std::string version = header()["driver"]["driver_version"];
  std::vector<char> buf(version.size() + 1);
  EXPECT_EQ(
      NVML_FN(nvml_, nvmlSystemGetDriverVersion)(buf.data(), version.size()),
      NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(NVML_FN(nvml_, nvmlSystemGetDriverVersion)(buf.data(),
                                                       version.size() + 1),
            NVML_SUCCESS);
  std::string name = gpu_info(0)["name"];
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetName)(device(0), buf.data(), 4),
            NVML_ERROR_INSUFFICIENT_SIZE);
}

TEST_F(ScenarioGetters, HandleByIndexOutOfRangeIsInvalidArgument) {
  nvmlDevice_t d = nullptr;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetHandleByIndex_v2)(count_, &d),
            NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetHandleByIndex_v2)(0, nullptr),
            NVML_ERROR_INVALID_ARGUMENT);
  unsigned temp = 0;
  int bogus = 0;
  EXPECT_EQ(
      NVML_FN(nvml_, nvmlDeviceGetTemperature)(
          reinterpret_cast<nvmlDevice_t>(&bogus), NVML_TEMPERATURE_GPU, &temp),
      NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(ScenarioGetters, HandlesByUuidSerialAndPciBusIdFindTheSameGpu) {
  for (unsigned i = 0; i < count_; ++i) {
    nvmlDevice_t by_index = device(i), d = nullptr;
    std::string uuid = gpu_info(i)["uuid"], serial = gpu_info(i)["serial"],
                bus = gpu_info(i)["pci_bus_id"];
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetHandleByUUID)(uuid.c_str(), &d),
              NVML_SUCCESS);
    EXPECT_EQ(d, by_index);
    d = nullptr;
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetHandleBySerial)(serial.c_str(), &d),
              NVML_SUCCESS);
    EXPECT_EQ(d, by_index);
    d = nullptr;
    auto by_pci = NVML_FN(nvml_, nvmlDeviceGetHandleByPciBusId_v2);
    ASSERT_EQ(by_pci(bus.c_str(), &d), NVML_SUCCESS);
    EXPECT_EQ(d, by_index);
    // The legacy 4-digit-domain form names the same device.
    d = nullptr;
    ASSERT_EQ(by_pci(bus.substr(4).c_str(), &d), NVML_SUCCESS);
    EXPECT_EQ(d, by_index);
    unsigned index = 99;
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetIndex)(d, &index), NVML_SUCCESS);
    EXPECT_EQ(index, i);
  }
  nvmlDevice_t d = nullptr;
  EXPECT_EQ(
      NVML_FN(nvml_, nvmlDeviceGetHandleByUUID)("GPU-00000000-no-such-gpu", &d),
      NVML_ERROR_NOT_FOUND);
}

TEST_F(ScenarioGetters, NameUuidSerialAndPciInfoMatchTheHeader) {
  for (unsigned i = 0; i < count_; ++i) {
    nvmlDevice_t d = device(i);
    char buf[96];
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetName)(d, buf, sizeof buf),
              NVML_SUCCESS);
    EXPECT_EQ(std::string(buf), gpu_info(i)["name"].get<std::string>());
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetUUID)(d, buf, sizeof buf),
              NVML_SUCCESS);
    EXPECT_EQ(std::string(buf), gpu_info(i)["uuid"].get<std::string>());
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetSerial)(d, buf, sizeof buf),
              NVML_SUCCESS);
    EXPECT_EQ(std::string(buf), gpu_info(i)["serial"].get<std::string>());

    std::string bus = gpu_info(i)["pci_bus_id"];
    unsigned dom = 0, b = 0, dev = 0, fn = 0;
    ASSERT_EQ(std::sscanf(bus.c_str(), "%x:%x:%x.%x", &dom, &b, &dev, &fn), 4);
    for (auto get : {NVML_FN(nvml_, nvmlDeviceGetPciInfo_v3),
                     NVML_FN(nvml_, nvmlDeviceGetPciInfo_v2)}) {
      nvmlPciInfo_t pci{};
      ASSERT_EQ(get(d, &pci), NVML_SUCCESS);
      EXPECT_STRCASEEQ(pci.busId, bus.c_str());
      EXPECT_STRCASEEQ(pci.busIdLegacy, bus.substr(4).c_str());
      EXPECT_EQ(pci.domain, dom);
      EXPECT_EQ(pci.bus, b);
      EXPECT_EQ(pci.device, dev);
      EXPECT_EQ(pci.pciDeviceId & 0xFFFF, 0x10DEu);  // NVIDIA's vendor id
    }
  }
}

TEST_F(ScenarioGetters, UnversionedPciInfoWritesOnlyTheOldShorterLayout) {
  // Old layout: busId[16], domain, bus, device, pciDeviceId, pciSubSystemId,
  // reserved0..3 = 52 bytes; the newer busId[32] that follows must stay
  // untouched, because an old client's buffer ends there.
  unsigned char buf[sizeof(nvmlPciInfo_t) + 8];
  std::memset(buf, 0xAB, sizeof buf);
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetPciInfo)(
                device(1), reinterpret_cast<nvmlPciInfo_t*>(buf)),
            NVML_SUCCESS);
  std::string bus = gpu_info(1)["pci_bus_id"];
  EXPECT_STRCASEEQ(reinterpret_cast<char*>(buf), bus.substr(4).c_str());
  for (size_t i = 52; i < sizeof buf; ++i)
    EXPECT_EQ(buf[i], 0xAB) << "byte " << i;
}

TEST_F(ScenarioGetters, MemoryInfoPlainAndV2MatchTheScenario) {
  for (unsigned i = 0; i < count_; ++i) {
    uint64_t total = gpu_info(i)["memory_total_bytes"],
             used = gpu_sample(i)["mem_used_bytes"];
    nvmlMemory_t m{};
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetMemoryInfo)(device(i), &m),
              NVML_SUCCESS);
    EXPECT_EQ(m.total, total);
    EXPECT_EQ(m.used, used);
    EXPECT_EQ(m.free, total - used);
    nvmlMemory_v2_t m2{};
    m2.version = nvmlMemory_v2;
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetMemoryInfo_v2)(device(i), &m2),
              NVML_SUCCESS);
    EXPECT_EQ(m2.total, total);
    EXPECT_EQ(m2.used, used);
    EXPECT_EQ(m2.free + m2.used + m2.reserved, total);
  }
}

TEST_F(ScenarioGetters, MemoryInfoV2WithWrongVersionIsArgumentVersionMismatch) {
  nvmlMemory_v2_t m2{};
  m2.version = sizeof(nvmlMemory_v2_t) | (1u << 24);
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetMemoryInfo_v2)(device(0), &m2),
            NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
}

TEST_F(ScenarioGetters, SampledReadingsMatchTheFirstSampleInNvmlUnits) {
  for (unsigned i = 0; i < count_; ++i) {
    SCOPED_TRACE("gpu " + std::to_string(i));
    nvmlDevice_t d = device(i);
    const json& s = gpu_sample(i);
    nvmlUtilization_t u{};
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetUtilizationRates)(d, &u),
              NVML_SUCCESS);
    EXPECT_EQ(u.gpu, std::lround(s["util_pct"].get<double>()));
    EXPECT_EQ(u.memory, std::lround(s["mem_util_pct"].get<double>()));
    unsigned v = 0;
    ASSERT_EQ(
        NVML_FN(nvml_, nvmlDeviceGetTemperature)(d, NVML_TEMPERATURE_GPU, &v),
        NVML_SUCCESS);
    EXPECT_EQ(v, s["temp_c"].get<unsigned>());
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetPowerUsage)(d, &v), NVML_SUCCESS);
    EXPECT_EQ(v, std::lround(s["power_w"].get<double>() * 1000));  // mW
    unsigned long long e = 0;
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetTotalEnergyConsumption)(d, &e),
              NVML_SUCCESS);
    EXPECT_EQ(e, s["energy_mj_total"].get<uint64_t>());
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetClockInfo)(d, NVML_CLOCK_SM, &v),
              NVML_SUCCESS);
    EXPECT_EQ(v, s["sm_clock_mhz"].get<unsigned>());
    ASSERT_EQ(
        NVML_FN(nvml_, nvmlDeviceGetClockInfo)(d, NVML_CLOCK_GRAPHICS, &v),
        NVML_SUCCESS);
    EXPECT_EQ(v, s["sm_clock_mhz"].get<unsigned>());
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetClockInfo)(d, NVML_CLOCK_MEM, &v),
              NVML_SUCCESS);
    EXPECT_EQ(v, s["mem_clock_mhz"].get<unsigned>());
    nvmlPstates_t p = NVML_PSTATE_UNKNOWN;
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetPerformanceState)(d, &p),
              NVML_SUCCESS);
    EXPECT_EQ(static_cast<int>(p), s["pstate"].get<int>());
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetCurrPcieLinkGeneration)(d, &v),
              NVML_SUCCESS);
    EXPECT_EQ(v, s["pcie_gen"].get<unsigned>());
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetCurrPcieLinkWidth)(d, &v),
              NVML_SUCCESS);
    EXPECT_EQ(v, s["pcie_width"].get<unsigned>());
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetPcieThroughput)(
                  d, NVML_PCIE_UTIL_TX_BYTES, &v),
              NVML_SUCCESS);
    EXPECT_EQ(v, s["pcie_tx_bytes_per_s"].get<uint64_t>() / 1024);  // KB/s
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetPcieThroughput)(
                  d, NVML_PCIE_UTIL_RX_BYTES, &v),
              NVML_SUCCESS);
    EXPECT_EQ(v, s["pcie_rx_bytes_per_s"].get<uint64_t>() / 1024);
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetPcieReplayCounter)(d, &v),
              NVML_SUCCESS);
    EXPECT_EQ(v, s["pcie_replay_total"].get<unsigned>());
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetTotalEccErrors)(
                  d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &e),
              NVML_SUCCESS);
    EXPECT_EQ(e, s["ecc_sbe_volatile_total"].get<uint64_t>());
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetTotalEccErrors)(
                  d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &e),
              NVML_SUCCESS);
    EXPECT_EQ(e, s["ecc_dbe_volatile_total"].get<uint64_t>());
    nvmlEnableState_t pending = NVML_FEATURE_ENABLED;
    ASSERT_EQ(
        NVML_FN(nvml_, nvmlDeviceGetRetiredPagesPendingStatus)(d, &pending),
        NVML_SUCCESS);
    EXPECT_EQ(pending == NVML_FEATURE_ENABLED,
              s["retired_pages_pending"].get<bool>());
    unsigned corr = 9, unc = 9, is_pending = 9, failure = 9;
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetRemappedRows)(d, &corr, &unc,
                                                        &is_pending, &failure),
              NVML_SUCCESS);
    EXPECT_EQ(is_pending != 0, s["remapped_rows_pending"].get<bool>());
    EXPECT_EQ(failure != 0, s["remapped_rows_failure"].get<bool>());
  }
}

TEST_F(ScenarioGetters, ClockEventReasonNamesBecomeNvmlBits) {
  // GPU 2's first sample lists sw_power_cap (bit 0x4); GPU 3's gpu_idle (0x1).
  ASSERT_EQ(gpu_sample(2)["clock_event_reasons"], json({"sw_power_cap"}));
  ASSERT_EQ(gpu_sample(3)["clock_event_reasons"], json({"gpu_idle"}));
  unsigned long long bits = 0;
  ASSERT_EQ(
      NVML_FN(nvml_, nvmlDeviceGetCurrentClocksEventReasons)(device(2), &bits),
      NVML_SUCCESS);
  EXPECT_EQ(bits, nvmlClocksThrottleReasonSwPowerCap);
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetCurrentClocksThrottleReasons)(device(3),
                                                                      &bits),
            NVML_SUCCESS);
  EXPECT_EQ(bits, nvmlClocksThrottleReasonGpuIdle);
  ASSERT_EQ(gpu_sample(0)["clock_event_reasons"], json::array());
  ASSERT_EQ(
      NVML_FN(nvml_, nvmlDeviceGetCurrentClocksEventReasons)(device(0), &bits),
      NVML_SUCCESS);
  EXPECT_EQ(bits, 0u);
}

TEST_F(ScenarioGetters, HeaderPropertiesMatchInNvmlUnits) {
  for (unsigned i = 0; i < count_; ++i) {
    SCOPED_TRACE("gpu " + std::to_string(i));
    nvmlDevice_t d = device(i);
    const json& g = gpu_info(i);
    unsigned v = 0;
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetPowerManagementLimit)(d, &v),
              NVML_SUCCESS);
    EXPECT_EQ(v, std::lround(g["power_limit_w"].get<double>() * 1000));
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetPowerManagementDefaultLimit)(d, &v),
              NVML_SUCCESS);
    EXPECT_EQ(v, std::lround(g["power_default_limit_w"].get<double>() * 1000));
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetMaxPcieLinkGeneration)(d, &v),
              NVML_SUCCESS);
    EXPECT_EQ(v, g["pcie_max_gen"].get<unsigned>());
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetMaxPcieLinkWidth)(d, &v),
              NVML_SUCCESS);
    EXPECT_EQ(v, g["pcie_max_width"].get<unsigned>());
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetTemperatureThreshold)(
                  d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &v),
              NVML_SUCCESS);
    EXPECT_EQ(v, g["temp_slowdown_c"].get<unsigned>());
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetTemperatureThreshold)(
                  d, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &v),
              NVML_SUCCESS);
    EXPECT_EQ(v, g["temp_shutdown_c"].get<unsigned>());
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetMaxClockInfo)(d, NVML_CLOCK_SM, &v),
              NVML_SUCCESS);
    EXPECT_EQ(v, g["sm_clock_max_mhz"].get<unsigned>());
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetMaxClockInfo)(d, NVML_CLOCK_MEM, &v),
              NVML_SUCCESS);
    EXPECT_EQ(v, g["mem_clock_max_mhz"].get<unsigned>());

    int major = -1, minor = -1;
    ASSERT_EQ(
        NVML_FN(nvml_, nvmlDeviceGetCudaComputeCapability)(d, &major, &minor),
        NVML_SUCCESS);
    EXPECT_EQ(std::to_string(major) + "." + std::to_string(minor),
              g["compute_capability"].get<std::string>());
    nvmlDeviceArchitecture_t arch = 0;
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetArchitecture)(d, &arch),
              NVML_SUCCESS);
    EXPECT_EQ(arch, g["architecture"] == "hopper" ? NVML_DEVICE_ARCH_HOPPER
                                                  : NVML_DEVICE_ARCH_AMPERE);

    nvmlEnableState_t cur = NVML_FEATURE_DISABLED, pend = NVML_FEATURE_DISABLED;
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetEccMode)(d, &cur, &pend),
              NVML_SUCCESS);
    EXPECT_EQ(cur == NVML_FEATURE_ENABLED, g["ecc_enabled"].get<bool>());
    unsigned mig = 7, mig_pending = 7;
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetMigMode)(d, &mig, &mig_pending),
              NVML_SUCCESS);
    EXPECT_EQ(mig == NVML_DEVICE_MIG_ENABLE, g["mig_enabled"].get<bool>());
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetPersistenceMode)(d, &cur),
              NVML_SUCCESS);
    EXPECT_EQ(cur == NVML_FEATURE_ENABLED, g["persistence_mode"].get<bool>());
    nvmlComputeMode_t mode = NVML_COMPUTEMODE_COUNT;
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetComputeMode)(d, &mode), NVML_SUCCESS);
    EXPECT_EQ(mode, g["compute_mode"] == "exclusive_process"
                        ? NVML_COMPUTEMODE_EXCLUSIVE_PROCESS
                        : NVML_COMPUTEMODE_DEFAULT);
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetNumaNodeId)(d, &v), NVML_SUCCESS);
    EXPECT_EQ(v, g["numa_node"].get<unsigned>());
  }
}

TEST_F(ScenarioGetters, MemoryTemperatureFieldValueMatchesTheScenario) {
  nvmlFieldValue_t values[2]{};
  values[0].fieldId = NVML_FI_DEV_MEMORY_TEMP;
  values[1].fieldId = 9999;  // no such field
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetFieldValues)(device(2), 2, values),
            NVML_SUCCESS);
  EXPECT_EQ(values[0].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(values[0].valueType, NVML_VALUE_TYPE_UNSIGNED_INT);
  EXPECT_EQ(values[0].value.uiVal, gpu_sample(2)["mem_temp_c"].get<unsigned>());
  EXPECT_GT(values[0].timestamp, 0);
  EXPECT_EQ(values[1].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
}

TEST_F(ScenarioGetters, NullScenarioFieldIsNotSupported) {
  // GPU 3 of the 4-GPU scenario has fan_pct null; the others report a fan.
  ASSERT_TRUE(gpu_sample(3)["fan_pct"].is_null());
  ASSERT_TRUE(gpu_sample(0)["fan_pct"].is_number());
  unsigned speed = 0;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetFanSpeed)(device(3), &speed),
            NVML_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetFanSpeed)(device(0), &speed),
            NVML_SUCCESS);
  EXPECT_EQ(speed, std::lround(gpu_sample(0)["fan_pct"].get<double>()));
}

TEST_F(ScenarioGetters, NullOutputPointerIsInvalidArgument) {
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetPowerUsage)(device(0), nullptr),
            NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetMemoryInfo)(device(0), nullptr),
            NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetCount_v2)(nullptr),
            NVML_ERROR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace fake_nvml_test
