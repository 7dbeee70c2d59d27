// MIG, NVLink, GPM, per-process utilisation and the calls real A100/H100s
// answer, through the fake's C ABI as any NVML client makes them.
#include <cmath>
#include <cstring>
#include <thread>

#include "nvml_client.h"

namespace fake_nvml_test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr unsigned long long kGiB = 1ULL << 30;

// GPU 0: an A100 80GB split 3g.40gb + 2 x 2g.20gb, a process on each
// instance. GPU 1: an H100 with 18 NVLinks (link 5 down, link 7 erroring),
// GPM values, per-process utilisation, video engines, fabric registered.
json dc_header() {
  json h = basic_header(2);
  h["gpus"][0].update({{"name", "NVIDIA A100-SXM4-80GB"},
                       {"memory_total_bytes", 80 * kGiB},
                       {"architecture", "ampere"},
                       {"mig_enabled", true},
                       {"mig_enabled_pending", true},
                       {"sm_clock_max_mhz", 1410},
                       {"mem_clock_max_mhz", 1593}});
  h["gpus"][1].update({{"architecture", "hopper"},
                       {"mig_enabled", false},
                       {"mig_enabled_pending", true},
                       {"nvlink_count", 18},
                       {"sm_clock_max_mhz", 1980},
                       {"mem_clock_max_mhz", 2619}});
  return h;
}

json mig(unsigned gi, const char* profile, unsigned long long total,
         unsigned long long used) {
  return {
      {"gi_id", gi},
      {"ci_id", 0},
      {"profile", profile},
      {"uuid", "MIG-aaaaaaaa-bbbb-5ccc-8ddd-00000000000" + std::to_string(gi)},
      {"mem_total_bytes", total},
      {"mem_used_bytes", used}};
}

json dc_sample(double t) {
  json s = util_sample(t, 2, 90);
  json& a100 = s["gpus"][0];
  a100.erase("util_pct");  // NVML has no utilisation for a MIG-enabled GPU
  a100["mig_instances"] = {mig(1, "3g.40gb", 40 * kGiB, 10 * kGiB),
                           mig(5, "2g.20gb", 20 * kGiB, 4 * kGiB),
                           mig(6, "2g.20gb", 20 * kGiB, 2 * kGiB)};
  a100["processes"] = {{{"pid", 101},
                        {"used_bytes", 10 * kGiB},
                        {"type", "compute"},
                        {"gi_id", 1},
                        {"ci_id", 0}},
                       {{"pid", 105},
                        {"used_bytes", 4 * kGiB},
                        {"type", "compute"},
                        {"gi_id", 5},
                        {"ci_id", 0}},
                       {{"pid", 106},
                        {"used_bytes", 2 * kGiB},
                        {"type", "compute"},
                        {"gi_id", 6},
                        {"ci_id", 0}}};
  json& h100 = s["gpus"][1];
  json links = json::array();
  for (int l = 0; l < 18; ++l) {
    links.push_back({{"link", l},
                     {"active", l != 5},
                     {"version", 4},
                     {"crc_errors_total", l == 7 ? 1234 : 0},
                     {"replay_total", l == 7 ? 56 : 0},
                     {"recovery_total", l == 7 ? 2 : 0}});
  }
  h100.update({{"nvlinks", links},
               {"nvlink_tx_bytes_per_s", 100ULL * 1024 * 1024 * 1024},
               {"nvlink_rx_bytes_per_s", 50ULL * 1024 * 1024 * 1024},
               {"sm_active_pct", 40.0},
               {"sm_occupancy_pct", 25.0},
               {"tensor_active_pct", 30.0},
               {"dram_active_pct", 60.0},
               {"fp64_active_pct", 0.0},
               {"fp32_active_pct", 12.0},
               {"fp16_active_pct", 20.0},
               {"gr_engine_active_pct", 95.0},
               {"enc_util_pct", 0.0},
               {"dec_util_pct", 17.0},
               {"fabric_state", "completed"},
               {"sm_clock_mhz", 1755},
               {"mem_clock_mhz", 2619}});
  h100["processes"] = {{{"pid", 200},
                        {"used_bytes", 30 * kGiB},
                        {"type", "compute"},
                        {"sm_util_pct", 88.0},
                        {"mem_util_pct", 41.0}}};
  return s;
}

class Datacenter : public ::testing::Test {
 protected:
  void SetUp() override {
    scenario_.emplace("FAKE_NVML_SCENARIO",
                      write_scenario("dc.jsonl", dc_header(), {dc_sample(0)}));
    ASSERT_EQ(NVML_FN(nvml_, nvmlInit_v2)(), NVML_SUCCESS);
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetHandleByIndex_v2)(0, &a100_),
              NVML_SUCCESS);
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetHandleByIndex_v2)(1, &h100_),
              NVML_SUCCESS);
  }
  void TearDown() override { NVML_FN(nvml_, nvmlShutdown)(); }

  NvmlClient nvml_{FAKE_NVML_LIB};
  std::optional<ScopedEnv> scenario_;
  nvmlDevice_t a100_ = nullptr, h100_ = nullptr;
};

TEST_F(Datacenter, MigModeAndPendingMode) {
  unsigned cur = 9, pend = 9;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetMigMode)(h100_, &cur, &pend),
            NVML_SUCCESS);
  EXPECT_EQ(cur, NVML_DEVICE_MIG_DISABLE);
  EXPECT_EQ(pend, NVML_DEVICE_MIG_ENABLE);  // waits for a GPU reset
}

TEST_F(Datacenter, MigDevicesAreEnumeratedWithTheirIdsMemoryAndUuid) {
  unsigned max = 0;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetMaxMigDeviceCount)(a100_, &max),
            NVML_SUCCESS);
  EXPECT_EQ(max, 7u);
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetMaxMigDeviceCount)(h100_, &max),
            NVML_SUCCESS);
  EXPECT_EQ(max, 0u);  // MIG off: none

  struct Want {
    unsigned gi;
    unsigned long long total, used;
  } want[] = {{1, 40 * kGiB, 10 * kGiB},
              {5, 20 * kGiB, 4 * kGiB},
              {6, 20 * kGiB, 2 * kGiB}};
  for (unsigned i = 0; i < 7; ++i) {
    nvmlDevice_t m = nullptr;
    nvmlReturn_t rc =
        NVML_FN(nvml_, nvmlDeviceGetMigDeviceHandleByIndex)(a100_, i, &m);
    if (i >= 3) {
      EXPECT_EQ(rc, NVML_ERROR_NOT_FOUND) << i;
      continue;
    }
    ASSERT_EQ(rc, NVML_SUCCESS) << i;
    unsigned is_mig = 0, gi = 0, ci = 9;
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceIsMigDeviceHandle)(m, &is_mig),
              NVML_SUCCESS);
    EXPECT_EQ(is_mig, 1u);
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetGpuInstanceId)(m, &gi), NVML_SUCCESS);
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetComputeInstanceId)(m, &ci),
              NVML_SUCCESS);
    EXPECT_EQ(gi, want[i].gi);
    EXPECT_EQ(ci, 0u);
    nvmlMemory_t mem{};
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetMemoryInfo)(m, &mem), NVML_SUCCESS);
    EXPECT_EQ(mem.total, want[i].total);
    EXPECT_EQ(mem.used, want[i].used);
    char uuid[96];
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetUUID)(m, uuid, sizeof uuid),
              NVML_SUCCESS);
    EXPECT_EQ(std::string(uuid), "MIG-aaaaaaaa-bbbb-5ccc-8ddd-00000000000" +
                                     std::to_string(want[i].gi));
    char name[96];
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetName)(m, name, sizeof name),
              NVML_SUCCESS);
    EXPECT_EQ(std::string(name), std::string("NVIDIA A100-SXM4-80GB MIG ") +
                                     (i == 0 ? "3g.40gb" : "2g.20gb"));
    nvmlDevice_t parent = nullptr;
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetDeviceHandleFromMigDeviceHandle)(
                  m, &parent),
              NVML_SUCCESS);
    EXPECT_EQ(parent, a100_);
    // The MIG device lists only its own instance's process.
    unsigned count = 4;
    nvmlProcessInfo_t procs[4];
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetComputeRunningProcesses_v3)(m, &count,
                                                                      procs),
              NVML_SUCCESS);
    ASSERT_EQ(count, 1u);
    EXPECT_EQ(procs[0].gpuInstanceId, want[i].gi);
    EXPECT_EQ(procs[0].usedGpuMemory, want[i].used);
    // A physical-GPU-only call refuses a MIG handle.
    unsigned temp = 0;
    EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetTemperature)(m, NVML_TEMPERATURE_GPU,
                                                       &temp),
              NVML_ERROR_INVALID_ARGUMENT);
  }
}

TEST_F(Datacenter, PhysicalGpuIsNotAMigDevice) {
  unsigned is_mig = 7, id = 0;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceIsMigDeviceHandle)(a100_, &is_mig),
            NVML_SUCCESS);
  EXPECT_EQ(is_mig, 0u);
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetGpuInstanceId)(a100_, &id),
            NVML_ERROR_NOT_SUPPORTED);
  nvmlDevice_t parent = nullptr;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetDeviceHandleFromMigDeviceHandle)(
                a100_, &parent),
            NVML_ERROR_INVALID_ARGUMENT);
  // The parent lists every instance's processes, each with its ids.
  unsigned count = 8;
  nvmlProcessInfo_t procs[8];
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetComputeRunningProcesses_v3)(
                a100_, &count, procs),
            NVML_SUCCESS);
  ASSERT_EQ(count, 3u);
  EXPECT_EQ(procs[1].pid, 105u);
  EXPECT_EQ(procs[1].gpuInstanceId, 5u);
  EXPECT_EQ(procs[1].computeInstanceId, 0u);
}

TEST_F(Datacenter, GpuInstancesProfilesAndComputeInstances) {
  // Profiles by index, named as NVML names them.
  nvmlGpuInstanceProfileInfo_v2_t p{};
  p.version = nvmlGpuInstanceProfileInfo_v2;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetGpuInstanceProfileInfoV)(
                a100_, NVML_GPU_INSTANCE_PROFILE_3_SLICE, &p),
            NVML_SUCCESS);
  EXPECT_STREQ(p.name, "MIG 3g.40gb");
  EXPECT_EQ(p.sliceCount, 3u);
  EXPECT_EQ(p.memorySizeMB, 40u * 1024);
  const unsigned id_3g = p.id;
  p.version = 1;  // a struct version the library does not know
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetGpuInstanceProfileInfoV)(
                a100_, NVML_GPU_INSTANCE_PROFILE_3_SLICE, &p),
            NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  nvmlGpuInstanceProfileInfo_t v1{};
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetGpuInstanceProfileInfo)(
                a100_, NVML_GPU_INSTANCE_PROFILE_7_SLICE, &v1),
            NVML_SUCCESS);
  EXPECT_EQ(v1.sliceCount, 7u);
  EXPECT_EQ(v1.memorySizeMB, 80u * 1024);

  nvmlGpuInstance_t gi = nullptr;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetGpuInstanceById)(a100_, 1, &gi),
            NVML_SUCCESS);
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetGpuInstanceById)(a100_, 2, &gi),
            NVML_ERROR_NOT_FOUND);
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetGpuInstanceById)(a100_, 1, &gi),
            NVML_SUCCESS);
  nvmlGpuInstanceInfo_t info{};
  ASSERT_EQ(NVML_FN(nvml_, nvmlGpuInstanceGetInfo)(gi, &info), NVML_SUCCESS);
  EXPECT_EQ(info.device, a100_);
  EXPECT_EQ(info.id, 1u);
  EXPECT_EQ(info.profileId, id_3g);
  EXPECT_EQ(info.placement.size, 3u);

  nvmlGpuInstance_t two[4];
  unsigned n = 4;
  nvmlGpuInstanceProfileInfo_t p2{};
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetGpuInstanceProfileInfo)(
                a100_, NVML_GPU_INSTANCE_PROFILE_2_SLICE, &p2),
            NVML_SUCCESS);
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetGpuInstances)(a100_, p2.id, two, &n),
            NVML_SUCCESS);
  EXPECT_EQ(n, 2u);

  nvmlComputeInstance_t ci[2];
  unsigned nci = 2;
  ASSERT_EQ(NVML_FN(nvml_, nvmlGpuInstanceGetComputeInstances)(gi, 2, ci, &nci),
            NVML_SUCCESS);  // compute profile 2 = 3 slices: the whole GI
  ASSERT_EQ(nci, 1u);
  nvmlComputeInstanceInfo_t cinfo{};
  ASSERT_EQ(NVML_FN(nvml_, nvmlComputeInstanceGetInfo_v2)(ci[0], &cinfo),
            NVML_SUCCESS);
  EXPECT_EQ(cinfo.gpuInstance, gi);
  EXPECT_EQ(cinfo.id, 0u);

  // A GPU with MIG off has no instances.
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetGpuInstanceById)(h100_, 1, &gi),
            NVML_ERROR_NOT_SUPPORTED);
}

TEST_F(Datacenter, NvlinksPerLinkAndByFieldValues) {
  nvmlEnableState_t active = NVML_FEATURE_DISABLED;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetNvLinkState)(h100_, 0, &active),
            NVML_SUCCESS);
  EXPECT_EQ(active, NVML_FEATURE_ENABLED);
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetNvLinkState)(h100_, 5, &active),
            NVML_SUCCESS);
  EXPECT_EQ(active, NVML_FEATURE_DISABLED);
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetNvLinkState)(h100_, 18, &active),
            NVML_ERROR_INVALID_ARGUMENT);  // past the GPU's 18 links
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetNvLinkState)(a100_, 0, &active),
            NVML_ERROR_NOT_SUPPORTED);  // no NVLink in this scenario
  unsigned version = 0;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetNvLinkVersion)(h100_, 7, &version),
            NVML_SUCCESS);
  EXPECT_EQ(version, unsigned{NVML_NVLINK_VERSION_4_0});
  unsigned long long crc = 0, replay = 0;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetNvLinkErrorCounter)(
                h100_, 7, NVML_NVLINK_ERROR_DL_CRC_FLIT, &crc),
            NVML_SUCCESS);
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetNvLinkErrorCounter)(
                h100_, 7, NVML_NVLINK_ERROR_DL_REPLAY, &replay),
            NVML_SUCCESS);
  EXPECT_EQ(crc, 1234u);
  EXPECT_EQ(replay, 56u);

  nvmlFieldValue_t fv[5]{};
  fv[0].fieldId = NVML_FI_DEV_NVLINK_LINK_COUNT;
  fv[1].fieldId = NVML_FI_DEV_NVLINK_GET_STATE;
  fv[1].scopeId = 5;
  fv[2].fieldId = NVML_FI_DEV_NVLINK_ERROR_DL_CRC;
  fv[2].scopeId = 7;
  fv[3].fieldId = NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL;
  fv[4].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
  fv[4].scopeId = 0xFFFFFFFFu;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetFieldValues)(h100_, 5, fv),
            NVML_SUCCESS);
  EXPECT_EQ(fv[0].value.uiVal, 18u);
  EXPECT_EQ(fv[1].value.uiVal, unsigned{NVML_FEATURE_DISABLED});
  EXPECT_EQ(fv[2].value.ullVal, 1234u);
  EXPECT_EQ(fv[3].value.ullVal, 1234u);
  ASSERT_EQ(fv[4].nvmlReturn, NVML_SUCCESS);
  // Cumulative KiB: grows at the scenario's 100 GiB/s.
  const unsigned long long tx1 = fv[4].value.ullVal;
  const long long t1 = fv[4].timestamp;
  std::this_thread::sleep_for(200ms);
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetFieldValues)(h100_, 5, fv),
            NVML_SUCCESS);
  const double kib_per_s = static_cast<double>(fv[4].value.ullVal - tx1) /
                           (static_cast<double>(fv[4].timestamp - t1) / 1e6);
  EXPECT_NEAR(kib_per_s, 100.0 * 1024 * 1024, 100.0 * 1024 * 1024 * 0.05);

  nvmlGpuFabricInfo_t fabric{};
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetGpuFabricInfo)(h100_, &fabric),
            NVML_SUCCESS);
  EXPECT_EQ(fabric.state, NVML_GPU_FABRIC_STATE_COMPLETED);
  EXPECT_EQ(fabric.status, NVML_SUCCESS);
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetGpuFabricInfo)(a100_, &fabric),
            NVML_ERROR_NOT_SUPPORTED);
}

TEST_F(Datacenter, GpmMetricsAverageTheIntervalBetweenTwoSamples) {
  nvmlGpmSupport_t support{};
  support.version = NVML_GPM_SUPPORT_VERSION;
  ASSERT_EQ(NVML_FN(nvml_, nvmlGpmQueryDeviceSupport)(h100_, &support),
            NVML_SUCCESS);
  EXPECT_EQ(support.isSupportedDevice, 1u);
  ASSERT_EQ(NVML_FN(nvml_, nvmlGpmQueryDeviceSupport)(a100_, &support),
            NVML_SUCCESS);
  EXPECT_EQ(support.isSupportedDevice, 0u);  // Ampere: no GPM

  nvmlGpmSample_t s1 = nullptr, s2 = nullptr;
  ASSERT_EQ(NVML_FN(nvml_, nvmlGpmSampleAlloc)(&s1), NVML_SUCCESS);
  ASSERT_EQ(NVML_FN(nvml_, nvmlGpmSampleAlloc)(&s2), NVML_SUCCESS);
  EXPECT_EQ(NVML_FN(nvml_, nvmlGpmSampleGet)(a100_, s1),
            NVML_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(NVML_FN(nvml_, nvmlGpmSampleGet)(h100_, s1), NVML_SUCCESS);
  std::this_thread::sleep_for(20ms);
  ASSERT_EQ(NVML_FN(nvml_, nvmlGpmSampleGet)(h100_, s2), NVML_SUCCESS);

  auto* req = new nvmlGpmMetricsGet_t{};
  req->version = NVML_GPM_METRICS_GET_VERSION;
  req->numMetrics = 4;
  req->sample1 = s1;
  req->sample2 = s2;
  req->metrics[0].metricId = NVML_GPM_METRIC_SM_UTIL;
  req->metrics[1].metricId = NVML_GPM_METRIC_ANY_TENSOR_UTIL;
  req->metrics[2].metricId = NVML_GPM_METRIC_DRAM_BW_UTIL;
  req->metrics[3].metricId = 4;  // integer util: not in the scenario
  ASSERT_EQ(NVML_FN(nvml_, nvmlGpmMetricsGet)(req), NVML_SUCCESS);
  EXPECT_EQ(req->metrics[0].nvmlReturn, NVML_SUCCESS);
  EXPECT_DOUBLE_EQ(req->metrics[0].value, 40.0);
  EXPECT_STREQ(req->metrics[0].metricInfo.unit, "%");
  EXPECT_DOUBLE_EQ(req->metrics[1].value, 30.0);
  EXPECT_DOUBLE_EQ(req->metrics[2].value, 60.0);
  EXPECT_EQ(req->metrics[3].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
  // Samples in the wrong order, or a struct version the library lacks.
  std::swap(req->sample1, req->sample2);
  EXPECT_EQ(NVML_FN(nvml_, nvmlGpmMetricsGet)(req),
            NVML_ERROR_INVALID_ARGUMENT);
  std::swap(req->sample1, req->sample2);
  req->version = 2;
  EXPECT_EQ(NVML_FN(nvml_, nvmlGpmMetricsGet)(req),
            NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  delete req;
  EXPECT_EQ(NVML_FN(nvml_, nvmlGpmSampleFree)(s1), NVML_SUCCESS);
  EXPECT_EQ(NVML_FN(nvml_, nvmlGpmSampleFree)(s2), NVML_SUCCESS);
}

TEST_F(Datacenter, ProcessUtilizationSamplesNewerThanLastSeen) {
  unsigned count = 0;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetProcessUtilization)(h100_, nullptr,
                                                            &count, 0),
            NVML_ERROR_INSUFFICIENT_SIZE);
  ASSERT_EQ(count, 1u);
  nvmlProcessUtilizationSample_t u[2]{};
  count = 2;
  ASSERT_EQ(
      NVML_FN(nvml_, nvmlDeviceGetProcessUtilization)(h100_, u, &count, 0),
      NVML_SUCCESS);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(u[0].pid, 200u);
  EXPECT_EQ(u[0].smUtil, 88u);
  EXPECT_EQ(u[0].memUtil, 41u);
  EXPECT_GT(u[0].timeStamp, 0u);
  count = 2;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetProcessUtilization)(
                h100_, u, &count, u[0].timeStamp + 3600000000ULL),
            NVML_ERROR_NOT_FOUND);  // nothing newer than an hour from now
  EXPECT_EQ(
      NVML_FN(nvml_, nvmlDeviceGetProcessUtilization)(a100_, u, &count, 0),
      NVML_ERROR_NOT_SUPPORTED);  // MIG-enabled
}

TEST_F(Datacenter, WhatARealH100AnswersBeyondTheBasics) {
  unsigned pct = 0, period = 0;
  ASSERT_EQ(
      NVML_FN(nvml_, nvmlDeviceGetDecoderUtilization)(h100_, &pct, &period),
      NVML_SUCCESS);
  EXPECT_EQ(pct, 17u);
  EXPECT_GT(period, 0u);
  unsigned n = 0;
  EXPECT_EQ(
      NVML_FN(nvml_, nvmlDeviceGetSupportedMemoryClocks)(h100_, &n, nullptr),
      NVML_ERROR_INSUFFICIENT_SIZE);
  ASSERT_EQ(n, 1u);
  unsigned mem_clock = 0;
  ASSERT_EQ(
      NVML_FN(nvml_, nvmlDeviceGetSupportedMemoryClocks)(h100_, &n, &mem_clock),
      NVML_SUCCESS);
  EXPECT_EQ(mem_clock, 2619u);
  std::vector<unsigned> clocks(200);
  n = 200;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetSupportedGraphicsClocks)(
                h100_, mem_clock, &n, clocks.data()),
            NVML_SUCCESS);
  EXPECT_EQ(clocks[0], 1980u);
  EXPECT_EQ(clocks[n - 1] % 15, 1980u % 15);
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetSupportedGraphicsClocks)(
                h100_, 1234, &n, clocks.data()),
            NVML_ERROR_NOT_FOUND);
  nvmlEnableState_t display = NVML_FEATURE_ENABLED;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetDisplayActive)(h100_, &display),
            NVML_SUCCESS);
  EXPECT_EQ(display, NVML_FEATURE_DISABLED);
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetDisplayMode)(h100_, &display),
            NVML_SUCCESS);
  unsigned mhz = 0;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetClock)(h100_, NVML_CLOCK_SM,
                                               NVML_CLOCK_ID_CURRENT, &mhz),
            NVML_SUCCESS);
  EXPECT_EQ(mhz, 1755u);
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetClock)(
                h100_, NVML_CLOCK_SM, NVML_CLOCK_ID_APP_CLOCK_DEFAULT, &mhz),
            NVML_SUCCESS);
  EXPECT_EQ(mhz, 1980u);
  unsigned units = 9, excluded = 9;
  ASSERT_EQ(NVML_FN(nvml_, nvmlUnitGetCount)(&units), NVML_SUCCESS);
  ASSERT_EQ(NVML_FN(nvml_, nvmlGetExcludedDeviceCount)(&excluded),
            NVML_SUCCESS);
  EXPECT_EQ(units, 0u);
  EXPECT_EQ(excluded, 0u);
  char name[1024];
  ASSERT_EQ(NVML_FN(nvml_, nvmlSystemGetProcessName)(
                static_cast<unsigned>(getpid()), name, sizeof name),
            NVML_SUCCESS);
  EXPECT_NE(std::string(name).find("fake_nvml_client_tests"), std::string::npos)
      << name;
  char tiny[4];
  ASSERT_EQ(NVML_FN(nvml_, nvmlSystemGetProcessName)(
                static_cast<unsigned>(getpid()), tiny, sizeof tiny),
            NVML_SUCCESS);
  EXPECT_EQ(std::strlen(tiny), 3u);  // truncated to the buffer
}

}  // namespace
}  // namespace fake_nvml_test
