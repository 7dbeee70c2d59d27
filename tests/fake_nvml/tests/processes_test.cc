// Running-process lists: NVML's two-call protocol and the struct layouts of
// the plain (v1), _v2 and _v3 functions.
#include <cstring>
#include <set>

#include "nvml_client.h"

namespace fake_nvml_test {
namespace {

using nlohmann::json;

class Processes : public ::testing::Test {
 protected:
  void SetUp() override {
    lines_ = read_jsonl(FAKE_NVML_SCENARIO_4GPU);
    ASSERT_EQ(NVML_FN(nvml_, nvmlInit_v2)(), NVML_SUCCESS);
  }
  void TearDown() override { NVML_FN(nvml_, nvmlShutdown)(); }
  nvmlDevice_t device(unsigned i) {
    nvmlDevice_t d = nullptr;
    EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetHandleByIndex_v2)(i, &d),
              NVML_SUCCESS);
    return d;
  }
  // The scenario's processes of GPU i that NVML lists as compute/graphics.
  std::vector<json> expected(unsigned i, bool compute) const {
    std::vector<json> out;
    for (const auto& p : lines_[1]["gpus"][i]["processes"]) {
      std::string t = p["type"];
      if (t == "compute+graphics" || t == (compute ? "compute" : "graphics"))
        out.push_back(p);
    }
    return out;
  }

  ScopedEnv scenario_{"FAKE_NVML_SCENARIO", FAKE_NVML_SCENARIO_4GPU};
  ScopedEnv speed_{"FAKE_NVML_SPEED", "0.000001"};
  NvmlClient nvml_{FAKE_NVML_LIB};
  std::vector<json> lines_;
};

TEST_F(Processes, CountZeroAnswersInsufficientSizeWithTheNeededCountThenFills) {
  auto want = expected(2, true);  // GPU 2 has two compute processes
  ASSERT_EQ(want.size(), 2u);
  auto get = NVML_FN(nvml_, nvmlDeviceGetComputeRunningProcesses_v3);
  unsigned count = 0;
  EXPECT_EQ(get(device(2), &count, nullptr), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, want.size());
  count = 1;  // still one too few
  std::vector<nvmlProcessInfo_t> infos(2);
  EXPECT_EQ(get(device(2), &count, infos.data()), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, want.size());
  count = 8;  // more room than needed: count shrinks to what was written
  infos.resize(8);
  ASSERT_EQ(get(device(2), &count, infos.data()), NVML_SUCCESS);
  ASSERT_EQ(count, want.size());
  for (unsigned k = 0; k < count; ++k) {
    EXPECT_EQ(infos[k].pid, want[k]["pid"].get<unsigned>());
    EXPECT_EQ(infos[k].usedGpuMemory, want[k]["used_bytes"].get<uint64_t>());
    EXPECT_EQ(infos[k].gpuInstanceId, 0xFFFFFFFFu);  // MIG off
    EXPECT_EQ(infos[k].computeInstanceId, 0xFFFFFFFFu);
  }
}

TEST_F(Processes, NoProcessesIsSuccessWithCountZero) {
  // GPU 0 has only compute processes: its graphics list is empty.
  ASSERT_TRUE(expected(0, false).empty());
  unsigned count = 0;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetGraphicsRunningProcesses_v3)(
                device(0), &count, nullptr),
            NVML_SUCCESS);
  EXPECT_EQ(count, 0u);
}

TEST_F(Processes, ComputePlusGraphicsProcessAppearsInBothLists) {
  auto graphics = expected(2, false);
  ASSERT_EQ(graphics.size(), 1u);
  unsigned count = 4;
  nvmlProcessInfo_v2_t infos[4];
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetGraphicsRunningProcesses_v2)(
                device(2), &count, infos),
            NVML_SUCCESS);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(infos[0].pid, graphics[0]["pid"].get<unsigned>());
  std::set<unsigned> compute_pids;
  count = 4;
  nvmlProcessInfo_t cinfos[4];
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetComputeRunningProcesses_v3)(
                device(2), &count, cinfos),
            NVML_SUCCESS);
  for (unsigned k = 0; k < count; ++k) compute_pids.insert(cinfos[k].pid);
  EXPECT_TRUE(compute_pids.count(infos[0].pid));
}

TEST_F(Processes, PlainFunctionFillsV1EntriesOfSixteenBytes) {
  // v1 = {pid, usedGpuMemory}: 16 bytes with padding; v2 = 24 bytes. Fill a
  // raw buffer and read entry 1 at offset 16: a v2-sized write would put it
  // at 24.
  static_assert(sizeof(nvmlProcessInfo_v1_t) == 16 &&
                sizeof(nvmlProcessInfo_v2_t) == 24);
  auto want = expected(2, true);
  unsigned char buf[4 * 24];
  std::memset(buf, 0xAB, sizeof buf);
  unsigned count = 4;
  ASSERT_EQ(
      NVML_FN(nvml_, nvmlDeviceGetComputeRunningProcesses)(
          device(2), &count, reinterpret_cast<nvmlProcessInfo_v1_t*>(buf)),
      NVML_SUCCESS);
  ASSERT_EQ(count, 2u);
  nvmlProcessInfo_v1_t second;
  std::memcpy(&second, buf + 16, sizeof second);
  EXPECT_EQ(second.pid, want[1]["pid"].get<unsigned>());
  EXPECT_EQ(second.usedGpuMemory, want[1]["used_bytes"].get<uint64_t>());
  EXPECT_EQ(buf[32], 0xAB) << "wrote past two v1 entries";

  std::memset(buf, 0xAB, sizeof buf);
  count = 4;
  ASSERT_EQ(
      NVML_FN(nvml_, nvmlDeviceGetComputeRunningProcesses_v2)(
          device(2), &count, reinterpret_cast<nvmlProcessInfo_v2_t*>(buf)),
      NVML_SUCCESS);
  nvmlProcessInfo_v2_t second_v2;
  std::memcpy(&second_v2, buf + 24, sizeof second_v2);
  EXPECT_EQ(second_v2.pid, want[1]["pid"].get<unsigned>());
  EXPECT_EQ(second_v2.gpuInstanceId, 0xFFFFFFFFu);
}

TEST_F(Processes, NullUsedBytesIsValueNotAvailable) {
  auto want = expected(3, true);
  ASSERT_EQ(want.size(), 1u);
  ASSERT_TRUE(want[0]["used_bytes"].is_null());
  unsigned count = 1;
  nvmlProcessInfo_t info{};
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetComputeRunningProcesses_v3)(
                device(3), &count, &info),
            NVML_SUCCESS);
  EXPECT_EQ(info.pid, want[0]["pid"].get<unsigned>());
  EXPECT_EQ(info.usedGpuMemory,
            static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE));
}

}  // namespace
}  // namespace fake_nvml_test
