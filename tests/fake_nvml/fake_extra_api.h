// NVML declarations the fake models but src/nvml/nvml_api.h (the collector's
// own subset) does not declare: the unversioned/alternative entry points
// other NVML clients call, and more field ids. Signatures and values are those
// of nvml.h (checked against nvml-wrapper-sys bindings.rs). Kept here rather
// than in src/nvml so the collector's header stays its exact working set.
#pragma once

#define GD_NVML_DECLARE_PROTOTYPES
#include "nvml/nvml_api.h"

#ifdef __cplusplus
extern "C" {
#endif

nvmlReturn_t nvmlInitWithFlags(unsigned int flags);
nvmlReturn_t nvmlDeviceGetCount(unsigned int* deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index,
                                        nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetHandleBySerial(const char* serial,
                                         nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char* pciBusId,
                                           nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* pciBusId,
                                              nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index);
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device,
                                             unsigned int* limit);
nvmlReturn_t nvmlDeviceGetFanSpeed_v2(nvmlDevice_t device, unsigned int fan,
                                      unsigned int* speed);
nvmlReturn_t nvmlDeviceGetNumFans(nvmlDevice_t device, unsigned int* numFans);
nvmlReturn_t nvmlDeviceGetPowerState(nvmlDevice_t device,
                                     nvmlPstates_t* pState);
nvmlReturn_t nvmlDeviceGetSupportedClocksThrottleReasons(
    nvmlDevice_t device, unsigned long long* reasons);
nvmlReturn_t nvmlDeviceGetSupportedClocksEventReasons(
    nvmlDevice_t device, unsigned long long* reasons);

#ifdef __cplusplus
}
#endif

// Field ids (nvml.h NVML_FI_*) nvmlDeviceGetFieldValues answers besides
// NVML_FI_DEV_MEMORY_TEMP.
#define FAKE_NVML_FI_DEV_ECC_SBE_VOL_TOTAL 3
#define FAKE_NVML_FI_DEV_ECC_DBE_VOL_TOTAL 4
#define FAKE_NVML_FI_DEV_ECC_SBE_AGG_TOTAL 5
#define FAKE_NVML_FI_DEV_ECC_DBE_AGG_TOTAL 6
#define FAKE_NVML_FI_DEV_RETIRED_PENDING 31
#define FAKE_NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION 83
#define FAKE_NVML_FI_DEV_PCIE_REPLAY_COUNTER 94
#define FAKE_NVML_FI_DEV_REMAPPED_COR 142
#define FAKE_NVML_FI_DEV_REMAPPED_UNC 143
#define FAKE_NVML_FI_DEV_REMAPPED_PENDING 144
#define FAKE_NVML_FI_DEV_REMAPPED_FAILURE 145

// Exported NVML entry point. The library is linked with a version script that
// keeps only nvml* global; this also documents which definitions are API.
#define FAKE_NVML_EXPORT extern "C" __attribute__((visibility("default")))
