// The fake's devices are the scenario's GPUs, numbered as a real driver
// numbers them, with the driver's answers before and without cuInit.
#include <set>

#include "client_fixture.h"
#include "common/pci_bus_id.h"

namespace fake_cuda_test {
namespace {

using gd::cuda::list_devices;

std::vector<std::string> names_and_buses(
    const std::vector<gd::cuda::DeviceFacts>& devices) {
  std::vector<std::string> out;
  for (const auto& d : devices) out.push_back(d.pci_bus_id + " " + d.name);
  return out;
}

TEST(FakeCudaDevices, NothingButVersionAndErrorNamesBeforeCuInit) {
  FakeCuda cuda;
  int n = -1;
  EXPECT_EQ(cuda.fn().cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
  CUdevice dev;
  EXPECT_EQ(cuda.fn().cuDeviceGet(&dev, 0), CUDA_ERROR_NOT_INITIALIZED);
  int version = 0;
  EXPECT_EQ(cuda.fn().cuDriverGetVersion(&version), CUDA_SUCCESS);
  EXPECT_EQ(version, 12020);
  const char* name = nullptr;
  EXPECT_EQ(cuda.fn().cuGetErrorName(CUDA_ERROR_ECC_UNCORRECTABLE, &name),
            CUDA_SUCCESS);
  EXPECT_STREQ(name, "CUDA_ERROR_ECC_UNCORRECTABLE");
  EXPECT_EQ(cuda.fn().cuGetErrorName(static_cast<CUresult>(12345), &name),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(name, nullptr);
  EXPECT_EQ(cuda.fn().cuInit(1), CUDA_ERROR_INVALID_VALUE);  // flags must be 0
}

TEST(FakeCudaDevices, WithoutAScenarioThereIsNoDevice) {
  FakeCuda cuda(std::map<std::string, std::string>{});
  EXPECT_EQ(cuda.fn().cuInit(0), CUDA_ERROR_NO_DEVICE);
  try {
    list_devices(cuda.lib());
    FAIL() << "no exception";
  } catch (const gd::cuda::CudaError& e) {
    EXPECT_EQ(e.name(), "CUDA_ERROR_NO_DEVICE");
    EXPECT_STREQ(
        e.what(),
        "cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)");
  }
}

TEST(FakeCudaDevices, FastestFirstByDefaultAsTheRealDriverOrdersThem) {
  FakeCuda cuda;
  auto devices = list_devices(cuda.lib());
  // The scenario lists two A100s (07, 0F) then two H100s (47, 4E); CUDA puts
  // the newer, faster H100s first, so CUDA 0 is NVML's GPU 2.
  EXPECT_EQ(names_and_buses(devices),
            (std::vector<std::string>{"0000:47:00.0 NVIDIA H100 80GB HBM3",
                                      "0000:4e:00.0 NVIDIA H100 80GB HBM3",
                                      "0000:07:00.0 NVIDIA A100-SXM4-80GB",
                                      "0000:0f:00.0 NVIDIA A100-SXM4-80GB"}));
  EXPECT_EQ(devices[0].cc_major, 9);
  EXPECT_EQ(devices[2].cc_major, 8);
  EXPECT_EQ(devices[2].sm_count, 108);
  EXPECT_EQ(devices[2].clock_khz, 1410000);
  EXPECT_EQ(devices[0].total_bytes, 64u << 20);
  EXPECT_EQ(devices[0].ecc_enabled, true);
  // The driver prints bus ids in upper case with a 4-digit domain.
  char bus[32];
  ASSERT_EQ(cuda.fn().cuDeviceGetPCIBusId(bus, sizeof bus, 1), CUDA_SUCCESS);
  EXPECT_STREQ(bus, "0000:4E:00.0");
  EXPECT_EQ(cuda.fn().cuDeviceGetPCIBusId(bus, sizeof bus, 4),
            CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(cuda.fn().cuDeviceGetPCIBusId(nullptr, 32, 0),
            CUDA_ERROR_INVALID_VALUE);
}

TEST(FakeCudaDevices, PciBusOrderAndVisibleDevices) {
  {
    FakeCuda cuda({{"FAKE_CUDA_SCENARIO", FAKE_NVML_SCENARIO_4GPU},
                   {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}});
    auto devices = list_devices(cuda.lib());
    ASSERT_EQ(devices.size(), 4u);
    EXPECT_EQ(devices[0].pci_bus_id, "0000:07:00.0");
    EXPECT_EQ(devices[3].pci_bus_id, "0000:4e:00.0");
  }
  {
    // Ordinals after reordering; the list stops at the first invalid entry.
    FakeCuda cuda({{"FAKE_CUDA_SCENARIO", FAKE_NVML_SCENARIO_4GPU},
                   {"CUDA_VISIBLE_DEVICES", "3,0,9,1"}});
    auto devices = list_devices(cuda.lib());
    EXPECT_EQ(names_and_buses(devices),
              (std::vector<std::string>{"0000:0f:00.0 NVIDIA A100-SXM4-80GB",
                                        "0000:47:00.0 NVIDIA H100 80GB HBM3"}));
  }
}

TEST(FakeCudaDevices, BusIdsMatchTheNvmlScenario) {
  FakeCuda cuda;
  std::set<std::string> cuda_ids, nvml_ids;
  for (const auto& d : list_devices(cuda.lib())) cuda_ids.insert(d.pci_bus_id);
  for (const char* id : {"00000000:07:00.0", "00000000:0F:00.0",
                         "00000000:47:00.0", "00000000:4E:00.0"})
    nvml_ids.insert(*gd::canonical_pci_bus_id(id));
  EXPECT_EQ(cuda_ids, nvml_ids);
}

TEST(FakeCudaDevices, BadFaultsFailCuInit) {
  FakeCuda cuda({{"FAKE_CUDA_SCENARIO", FAKE_NVML_SCENARIO_4GPU},
                 {"FAKE_CUDA_FAULTS", R"([{"gpu": 1, "bitflip": 3}])"}});
  EXPECT_EQ(cuda.fn().cuInit(0), CUDA_ERROR_INVALID_VALUE);
}

}  // namespace
}  // namespace fake_cuda_test
